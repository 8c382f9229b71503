import { fetchEnvelope } from "../envelope.ts";
import { DEFAULT_MAX_BYTES, type FetchLike, insecureAddress, platformFetch } from "../http.ts";
import { type JwkSet, KeyRing } from "../keys.ts";
import type { OutcomeClass } from "../outcome.ts";
import { Verifier } from "../verifier.ts";
import { EXIT, parseCommand, USAGE, UsageError } from "./args.ts";
import { formatEnvelope, formatResolve, formatVerify } from "./format.ts";

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  fetch?: FetchLike;
  /** Reads a local file (for `--jwks FILE`); absent where there is no file system. */
  readFile?: (path: string) => Promise<string>;
}

function exitFor(outcome: OutcomeClass | "resolved" | "envelope" | "envelope_unavailable"): number {
  if (outcome === "ok" || outcome === "resolved" || outcome === "envelope") return EXIT.ok;
  if (outcome === "network_failure" || outcome === "envelope_unavailable") return EXIT.network;
  if (outcome === "signature_invalid" || outcome === "unknown_key" || outcome === "history_broken") return EXIT.proof;
  if (outcome === "ok_signature_skipped") return EXIT.unsigned;
  return EXIT.failed;
}

/** `--jwks`: a URL is handed to the verifier as is (it must be https, or http to loopback); anything else is a JWK Set file. */
async function trustedKeys(value: string, io: Io): Promise<JwkSet | string> {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    const unsafe = insecureAddress(value);
    if (unsafe) throw new UsageError(`--jwks: "${value}" ${unsafe}`);
    return value;
  }
  if (!io.readFile) throw new UsageError("--jwks: no file system here; give the key set's URL");
  let text: string;
  try {
    text = await io.readFile(value);
  } catch {
    throw new UsageError(`--jwks: cannot read ${value}`);
  }
  try {
    const set = JSON.parse(text) as JwkSet;
    if (new KeyRing(set).kids.length === 0) throw new TypeError("no usable key");
    return set;
  } catch (error) {
    throw new UsageError(`--jwks: ${value} is not a JWK Set with an EC P-256 key (${(error as Error).message})`);
  }
}

/**
 * Runs the `passport` command line and returns its exit code.
 * @example
 * const code = await run(["verify", id, "--family", "api"], { stdout: console.log, stderr: console.error, env: process.env });
 */
export async function run(argv: string[], io: Io): Promise<number> {
  try {
    const command = parseCommand(argv, io.env);
    if (command.command === "help") {
      io.stdout(USAGE);
      return EXIT.ok;
    }
    const { common, target, expectation } = command;
    const print = (value: unknown, text: string) => io.stdout(common.json ? JSON.stringify(value, null, 2) : text);
    const http = {
      fetch: io.fetch ?? platformFetch,
      timeoutMs: common.timeoutMs,
      retries: common.retries,
      retryDelayMs: 250,
      maxBytes: DEFAULT_MAX_BYTES,
    };
    if (command.command === "envelope") {
      // The envelope is an unsigned answer about a target, not a record: no keys are involved.
      const result = await fetchEnvelope({ resolver: common.resolver.replace(/\/+$/, ""), http }, target);
      print(result, formatEnvelope(result));
      return exitFor(result.outcome);
    }
    const verifier = new Verifier({
      resolver: common.resolver,
      ...http,
      cache: false,
      ...(common.insecureNoSignature
        ? { signature: "skip-insecure" as const }
        : { jwks: await trustedKeys(common.jwks ?? "", io) }),
    });
    if (common.insecureNoSignature) {
      io.stderr(
        "passport: WARNING --insecure-no-signature: record signatures are NOT checked; the answer may be forged.",
      );
    }
    if (command.command === "resolve") {
      const result = await verifier.resolve(target, {
        consequence: "changing",
        ...(expectation.history ? { history: true } : {}),
        ...(expectation.seen ? { seen: expectation.seen } : {}),
      });
      print(result, formatResolve(result));
      if (result.outcome === "resolved" && result.proof.signature !== "verified") return EXIT.unsigned;
      return exitFor(result.outcome);
    }
    const result = await verifier.verify(target, expectation);
    print(result, formatVerify(result));
    return exitFor(result.outcome);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`passport: ${error.message}\nRun "passport help" for usage.`);
      return EXIT.usage;
    }
    throw error;
  }
}
