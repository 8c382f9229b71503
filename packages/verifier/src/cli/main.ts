import { OUTCOME_KINDS, type OutcomeClass, type OutcomeKind } from "@passport/protocol";
import { fetchAgentCard, verifyAgentCard } from "../a2a-card.ts";
import { fetchEnvelope } from "../envelope.ts";
import type { Expectation } from "../expectation.ts";
import { DEFAULT_MAX_BYTES, type FetchLike, type HttpPolicy, insecureAddress, platformFetch } from "../http.ts";
import { type JwkSet, KeyRing } from "../keys.ts";
import { type AuditReport, auditLog } from "../log/audit.ts";
import type { LogOptions } from "../log/check.ts";
import type { CheckpointStore, StoredCheckpoint } from "../log/checkpoint.ts";
import { LogClient } from "../log/client.ts";
import { actionPolicyFor, loadPolicy, type PolicyDocument, PolicyError } from "../policy.ts";
import { type ResolveResult, Verifier } from "../verifier.ts";
import { EXIT, type LogFlags, type PolicyFlags, parseCommand, type Supplied, UsageError } from "./args.ts";
import {
  type CardCheckResult,
  formatAudit,
  formatCardCheck,
  formatDecision,
  formatEnvelope,
  formatResolve,
  formatVerify,
} from "./format.ts";
import { escapeStrings, terminalJson } from "./terminal.ts";
import { USAGE } from "./usage.ts";

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  fetch?: FetchLike;
  /** Reads a local file (for `--jwks FILE`); absent where there is no file system. */
  readFile?: (path: string) => Promise<string>;
  /** Writes a local file, creating its directory (the remembered checkpoint); absent where there is no file system. */
  writeFile?: (path: string, text: string) => Promise<void>;
  /** The clock, in milliseconds since the epoch; default `Date.now`. */
  now?: () => number;
}

const EXIT_FOR: Readonly<Record<OutcomeKind, number>> = {
  passed: EXIT.ok,
  unsigned: EXIT.unsigned,
  failed: EXIT.failed,
  unreachable: EXIT.network,
  disproved: EXIT.proof,
};

/**
 * A record published after the newest checkpoint cannot be proved in the log yet, which is no
 * evidence against it: like a stale checkpoint it is 1 (retry shortly), not 4.
 */
function exitForResult(result: { outcome: OutcomeClass | "resolved" }): number {
  if (result.outcome === "not_in_log" && "kind" in result && result.kind === "beyond_checkpoint") return EXIT.failed;
  return exitFor(result.outcome);
}

function exitFor(outcome: OutcomeClass | "resolved" | "envelope" | "envelope_unavailable"): number {
  if (outcome === "resolved" || outcome === "envelope") return EXIT.ok;
  if (outcome === "envelope_unavailable") return EXIT.network;
  return EXIT_FOR[OUTCOME_KINDS[outcome]];
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

const VERIFIER_KEY = /^[^+\s]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/;

/** A note verifier key given on the command line, or read from the file named. */
async function noteKey(value: string, flag: string, io: Io): Promise<string> {
  if (VERIFIER_KEY.test(value)) return value;
  if (!io.readFile) throw new UsageError(`${flag}: "${value}" is not a verifier key, and there is no file system here`);
  try {
    return (await io.readFile(value)).trim();
  } catch {
    throw new UsageError(`${flag}: "${value}" is neither a verifier key (<name>+<hash>+<key>) nor a readable file`);
  }
}

/** A compact JWS given on the command line (`a.b.c` or `a..c`), or read from the file named. */
async function jwsOrFile(value: string, flag: string, io: Io): Promise<string> {
  if (/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/.test(value)) return value;
  if (!io.readFile) throw new UsageError(`${flag}: "${value}" is not a compact JWS, and there is no file system here`);
  try {
    return (await io.readFile(value)).trim();
  } catch {
    throw new UsageError(`${flag}: "${value}" is neither a compact JWS nor a readable file`);
  }
}

/** `verify`'s supplied record and stapled token, read from the files named. */
async function readSupplied(supplied: Supplied, io: Io): Promise<Pick<Expectation, "record" | "statusToken">> {
  const out: Pick<Expectation, "record" | "statusToken"> = {};
  if (supplied.statusToken) out.statusToken = await jwsOrFile(supplied.statusToken, "--status-token", io);
  if (supplied.recordFile) {
    if (!io.readFile) throw new UsageError("--record-file: no file system here");
    let body: string;
    try {
      body = await io.readFile(supplied.recordFile);
    } catch {
      throw new UsageError(`--record-file: cannot read ${supplied.recordFile}`);
    }
    const signature = supplied.recordSignature
      ? await jwsOrFile(supplied.recordSignature, "--record-signature", io)
      : undefined;
    out.record = { body, ...(signature ? { signature } : {}) };
  }
  return out;
}

/** A policy file that cannot be used: one line naming where it is wrong, no usage hint. */
class PolicyFileError extends UsageError {}

/** `--policy FILE`: read, checked by `loadPolicy`, and the action looked up, before any request. */
async function readPolicy(flags: PolicyFlags, io: Io): Promise<PolicyDocument> {
  if (!io.readFile) throw new UsageError("--policy: no file system here");
  let text: string;
  try {
    text = await io.readFile(flags.file);
  } catch {
    throw new PolicyFileError(`--policy: cannot read ${flags.file}`);
  }
  try {
    const policy = loadPolicy(text);
    actionPolicyFor(policy, flags.action);
    return policy;
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    if (error.path.startsWith("/actions/") && error.message.includes("names no action")) {
      let policy: PolicyDocument | undefined;
      try {
        policy = loadPolicy(text);
      } catch {
        policy = undefined;
      }
      const names = Object.keys(policy?.actions ?? {});
      throw new PolicyFileError(
        `--action: ${flags.file} has no action "${flags.action}"${names.length > 0 ? ` (it has: ${names.join(", ")})` : ""}`,
      );
    }
    throw new PolicyFileError(`${flags.file}: ${error.message}`);
  }
}

/** The remembered checkpoints, one per log origin, in a JSON file written whole after each change. */
async function fileStore(path: string, io: Io): Promise<CheckpointStore> {
  const { readFile, writeFile } = io;
  if (!readFile || !writeFile) throw new UsageError("--log-state: no file system here");
  let text: string | undefined;
  try {
    text = await readFile(path);
  } catch {
    text = undefined; // no checkpoint remembered yet
  }
  let checkpoints: Record<string, StoredCheckpoint> = {};
  if (text !== undefined) {
    try {
      const parsed = JSON.parse(text) as { checkpoints?: Record<string, StoredCheckpoint> };
      checkpoints = parsed.checkpoints ?? {};
      for (const c of Object.values(checkpoints)) {
        if (!Number.isSafeInteger(c.size) || typeof c.root_hash !== "string") throw new Error("bad entry");
      }
    } catch {
      throw new UsageError(`--log-state: ${path} is not a remembered-checkpoint file; move it away to start over`);
    }
  }
  return {
    load: async (origin) => checkpoints[origin],
    save: async (origin, checkpoint) => {
      checkpoints = { ...checkpoints, [origin]: checkpoint };
      await writeFile(path, `${JSON.stringify({ checkpoints }, null, 2)}\n`);
    },
  };
}

/** The verifier's `log` option from the flags, keys read and checked (a bad key is a usage error). */
async function logOptions(flags: LogFlags, io: Io): Promise<LogOptions> {
  const key = await noteKey(flags.key, "--log", io);
  const witnesses: string[] = [];
  for (const witness of flags.witnesses) witnesses.push(await noteKey(witness, "--witness", io));
  const options: LogOptions = {
    key,
    maxAge: flags.maxAge,
    witnesses,
    witnessQuorum: flags.quorum ?? witnesses.length,
    maxBundles: flags.scan,
  };
  if (flags.state) options.store = await fileStore(flags.state, io);
  else
    io.stderr(
      "passport: no state directory known (set --log-state or $PASSPORT_LOG_STATE); checkpoints are not remembered between runs.",
    );
  return options;
}

async function logClient(resolver: string, http: HttpPolicy, options: LogOptions): Promise<LogClient> {
  try {
    return await LogClient.create({
      base: resolver,
      http,
      key: options.key,
      witnesses: options.witnesses ?? [],
      witnessQuorum: options.witnessQuorum ?? 0,
    });
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(`--log/--witness: ${error.message}`);
    throw error;
  }
}

/** What `verify-card` prints: the card's check, or why the passport could not be resolved. */
type CardCommandResult = { card: CardCheckResult; exit: number } | { resolved: ResolveResult };

/** The exit code of each card answer (docs/verifier.md, "Signed A2A agent cards"). */
const CARD_EXIT: Readonly<Record<CardCheckResult["outcome"], number>> = {
  card_signed: EXIT.ok,
  card_unavailable: EXIT.network,
  passport_unnamed: EXIT.failed,
  card_malformed: EXIT.failed,
  card_unsigned: EXIT.failed,
  passport_keys_unproven: EXIT.failed,
  key_not_proven: EXIT.failed,
  key_withdrawn: EXIT.failed,
  signature_invalid: EXIT.proof,
  key_unavailable: EXIT.network,
};

/**
 * `passport verify-card <url> [identity-id]`: fetches the card, resolves the passport named (on
 * the command line, else by the card's `passport` member) with its proof checked as for
 * `resolve`, and checks the card's signatures against the keys it proves (`verifyAgentCard`).
 */
async function verifyCard(
  command: { url: string; identityId?: string },
  verifier: Verifier,
  http: { fetch: FetchLike; timeoutMs: number },
  now: (() => number) | undefined,
): Promise<CardCommandResult> {
  const answer = (check: Omit<CardCheckResult, "card_url">, signed = true): CardCommandResult => {
    const exit = CARD_EXIT[check.outcome];
    // A card accepted on a record whose signature was not checked is never plain ok.
    return { card: { card_url: command.url, ...check }, exit: exit === EXIT.ok && !signed ? EXIT.unsigned : exit };
  };
  const fetched = await fetchAgentCard(command.url, http);
  if (!fetched.ok) return answer({ outcome: "card_unavailable", detail: fetched.detail });
  const named = (fetched.card as { passport?: unknown } | null)?.passport;
  const identityId = command.identityId ?? (typeof named === "string" ? named : undefined);
  if (!identityId) {
    return answer({
      outcome: "passport_unnamed",
      detail: 'The card names no passport (no "passport" member); give the identity id after the URL.',
    });
  }
  const resolved = await verifier.resolve(identityId, { consequence: "changing" });
  if (resolved.outcome !== "resolved") return { resolved };
  const check = await verifyAgentCard(fetched.card, resolved.record, { ...http, ...(now ? { now: now() } : {}) });
  const signed = resolved.proof.signature === "verified";
  const base = { identity_id: identityId, record_signature: resolved.proof.signature };
  if (check.ok) return answer({ outcome: "card_signed", ...base, signatures: check.signatures }, signed);
  return answer({ outcome: check.problem, ...base, detail: check.detail });
}

function auditExit(report: AuditReport): number {
  if (report.ok) return EXIT.ok;
  return report.outcome === "network_failure" ? EXIT.network : EXIT.proof;
}

/**
 * Runs the `passport` command line and returns its exit code.
 * @example
 * const code = await run(["verify", id, "--family", "api"], { stdout: console.log, stderr: console.error, env: process.env });
 */
/** Whether a result (or a decision's outcome) says the resolver gave no answer. */
function unreached(result: unknown): boolean {
  const outcome = (result as { outcome?: unknown }).outcome;
  const kind = typeof outcome === "object" && outcome !== null ? (outcome as { outcome?: unknown }).outcome : outcome;
  return kind === "network_failure" || kind === "envelope_unavailable";
}

export async function run(argv: string[], io: Io): Promise<number> {
  try {
    const command = parseCommand(argv, io.env);
    if (command.command === "help") {
      io.stdout(USAGE);
      return EXIT.ok;
    }
    const { common } = command;
    // What the resolver serves is tenants' text: printed with its control characters escaped.
    // An answer that never came says, on stderr, which resolver was tried and how to name another.
    const print = <T>(value: T, format: (safe: T) => string) => {
      io.stdout(common.json ? terminalJson(value) : format(escapeStrings(value)));
      if (unreached(value)) {
        io.stderr(
          `passport: the resolver tried was ${common.resolver} (${common.resolverFrom}); check that it answers there, or name another with --resolver URL or PASSPORT_RESOLVER.`,
        );
      }
    };
    const http = {
      fetch: io.fetch ?? platformFetch,
      timeoutMs: common.timeoutMs,
      retries: common.retries,
      retryDelayMs: 250,
      maxBytes: DEFAULT_MAX_BYTES,
    };
    const resolver = common.resolver.replace(/\/+$/, "");
    const log = common.log ? await logOptions(common.log, io) : undefined;
    const client = log ? await logClient(resolver, http, log) : undefined;
    if (command.command === "log") {
      if (!client || !log) throw new UsageError("log needs --log KEY|FILE");
      const report = await auditLog(client, {
        resolver,
        http,
        ...command.range,
        ...(log.store ? { store: log.store } : {}),
        now: (io.now ?? Date.now)(),
      });
      print(report, formatAudit);
      return auditExit(report);
    }
    const keyedVerifier = async () => {
      const verifier = new Verifier({
        resolver: common.resolver,
        ...http,
        cache: false,
        ...(io.now ? { now: io.now } : {}),
        ...(log ? { log } : {}),
        ...(common.insecureNoSignature
          ? { signature: "skip-insecure" as const }
          : { jwks: await trustedKeys(common.jwks ?? "", io) }),
      });
      if (common.insecureNoSignature) {
        io.stderr(
          "passport: WARNING --insecure-no-signature: record signatures are NOT checked; the answer may be forged.",
        );
      }
      return verifier;
    };
    if (command.command === "verify-card") {
      const verifier = await keyedVerifier();
      const result = await verifyCard(command, verifier, { fetch: http.fetch, timeoutMs: common.timeoutMs }, io.now);
      if ("card" in result) {
        print(result.card, formatCardCheck);
        return result.exit;
      }
      print(result.resolved, formatResolve);
      return exitForResult(result.resolved);
    }
    const { target, expectation } = command;
    // A bad policy is refused before anything is fetched.
    const policy = command.command === "verify" && command.policy ? await readPolicy(command.policy, io) : undefined;
    if (command.command === "envelope") {
      // The envelope is an unsigned answer about a target, not a record: no keys are involved.
      const result = await fetchEnvelope({ resolver, http }, target);
      print(result, formatEnvelope);
      return exitFor(result.outcome);
    }
    const verifier = await keyedVerifier();
    if (command.command === "resolve") {
      const result = await verifier.resolve(target, {
        consequence: "changing",
        ...(expectation.history ? { history: true } : {}),
        ...(expectation.seen ? { seen: expectation.seen } : {}),
      });
      print(result, formatResolve);
      if (result.outcome === "resolved" && result.proof.signature !== "verified") return EXIT.unsigned;
      return exitForResult(result);
    }
    if (policy && command.command === "verify" && command.policy) {
      const flags = command.policy;
      const supplied = await readSupplied(command.supplied, io);
      const decided = await verifier.decide(target, {
        policy,
        action: flags.action,
        ...(expectation.baseUrl !== undefined ? { baseUrl: expectation.baseUrl } : {}),
        ...(expectation.seen ? { seen: expectation.seen } : {}),
        ...(supplied.statusToken ? { statusToken: supplied.statusToken } : {}),
        ...(supplied.record ? { record: supplied.record } : {}),
        ...(flags.amount ? { amount: flags.amount } : {}),
        ...(flags.resource !== undefined ? { resource: flags.resource } : {}),
      });
      print(decided, formatDecision);
      // Only allow exits 0; an unchecked signature stays 5, so automation never mistakes it for ok.
      const outcomeExit = exitForResult(decided.outcome);
      if (decided.decision === "allow")
        return decided.outcome.proof?.signature === "verified" ? EXIT.ok : EXIT.unsigned;
      return outcomeExit === EXIT.ok || outcomeExit === EXIT.unsigned ? EXIT.failed : outcomeExit;
    }
    const result = await verifier.verify(target, { ...expectation, ...(await readSupplied(command.supplied, io)) });
    print(result, formatVerify);
    return exitForResult(result);
  } catch (error) {
    if (error instanceof PolicyFileError) {
      io.stderr(`passport: ${error.message}`);
      return EXIT.usage;
    }
    if (error instanceof UsageError) {
      io.stderr(`passport: ${error.message}\nRun "passport help" for usage.`);
      return EXIT.usage;
    }
    throw error;
  }
}
