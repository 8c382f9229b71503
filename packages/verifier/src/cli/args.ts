// Long on purpose: the one table of the CLI's flags (OPTIONS) and the rules that read them, every
// command's flags checked against the same table, so which flag a command takes and what it means
// is read in one place (the usage text is cli/usage.ts).
import { CONSEQUENCES, type Consequence, durationSeconds, type Expectation } from "../expectation.ts";
import { insecureAddress } from "../http.ts";
import type { RequiredBinding, SeenVersion } from "../outcome.ts";

/** Exit codes; documented in the package README and docs/verifier.md. */
export const EXIT = { ok: 0, failed: 1, usage: 2, network: 3, proof: 4, unsigned: 5 } as const;

export class UsageError extends Error {
  override name = "UsageError";
}

/** Values `verify` reads from files or takes as given: a record from elsewhere and a stapled token. */
export interface Supplied {
  recordFile?: string;
  recordSignature?: string;
  statusToken?: string;
}

/** `verify --policy`: the policy file (read by the caller), the action and the call's own parameters. */
export interface PolicyFlags {
  file: string;
  action: string;
  amount?: { value: string; currency: string };
  resource?: string;
}

export type Command =
  | { command: "help" }
  | {
      command: "resolve" | "verify" | "envelope";
      target: string;
      common: Common;
      expectation: Expectation;
      supplied: Supplied;
      policy?: PolicyFlags;
    }
  | { command: "log"; common: Common; range: { from?: number; to?: number } }
  | {
      command: "verify-card";
      /** The A2A agent card's URL. */
      url: string;
      /** The passport to check the card against; absent: the one the card names (`passport`). */
      identityId?: string;
      common: Common;
    };

/** The `--log` settings; keys are as given (text or a file), read by the caller. */
export interface LogFlags {
  key: string;
  maxAge: number;
  scan: number;
  witnesses: string[];
  quorum?: number;
  /** The remembered-checkpoint file; absent when no state directory is known. */
  state?: string;
}

interface Common {
  resolver: string;
  /** Where the resolver's address came from, so a failure to reach it can say which one was tried. */
  resolverFrom: "--resolver" | "PASSPORT_RESOLVER" | "the default";
  json: boolean;
  timeoutMs: number;
  retries: number;
  /** A JWK Set file path or an https URL. */
  jwks?: string;
  /** `--insecure-no-signature`: the caller opted out of signature checks. */
  insecureNoSignature: boolean;
  log?: LogFlags;
}

const OPTIONS = {
  resolver: "string",
  json: "boolean",
  family: "string",
  org: "string",
  env: "string",
  version: "string",
  "base-url": "string",
  "require-binding": "list",
  "require-evidence": "list",
  lifecycle: "string",
  availability: "string",
  consequence: "string",
  "max-age": "string",
  "status-token": "string",
  "status-max-age": "string",
  "record-file": "string",
  "record-signature": "string",
  policy: "string",
  action: "string",
  amount: "string",
  resource: "string",
  jwks: "string",
  "insecure-no-signature": "boolean",
  history: "boolean",
  seen: "string",
  timeout: "string",
  retries: "string",
  log: "string",
  "log-max-age": "string",
  "log-scan": "string",
  witness: "list",
  "witness-quorum": "string",
  "log-state": "string",
  from: "string",
  to: "string",
  help: "boolean",
} as const;

type Options = typeof OPTIONS;
type Values = {
  [K in keyof Options]?: Options[K] extends "boolean" ? boolean : Options[K] extends "list" ? string[] : string;
};

/**
 * A small `--name value` / `--name=value` parser. Hand-written rather than `node:util` so the
 * command runs wherever the SDK does (workerd has no `parseArgs`).
 */
function parseFlags(argv: string[]): { values: Values; positionals: string[] } {
  const values: Record<string, string | boolean | string[]> = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "-h") {
      values.help = true;
      continue;
    }
    if (!arg.startsWith("--")) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const kind = (OPTIONS as Record<string, string>)[name];
    if (!kind) throw new UsageError(`Unknown option "--${name}"`);
    if (kind === "boolean") {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      values[name] = true;
      continue;
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || (eq < 0 && value.startsWith("--"))) throw new UsageError(`--${name} needs a value`);
    if (kind === "list") values[name] = [...((values[name] as string[] | undefined) ?? []), value];
    else if (name in values) throw new UsageError(`--${name} given more than once`);
    else values[name] = value;
  }
  return { values: values as Values, positionals };
}

const VERIFY_ONLY = [
  "family",
  "org",
  "env",
  "version",
  "base-url",
  "require-binding",
  "require-evidence",
  "lifecycle",
  "availability",
  "consequence",
  "max-age",
  "status-token",
  "status-max-age",
  "record-file",
  "record-signature",
  "policy",
  "action",
  "amount",
  "resource",
] as const;

/** Expectations a policy gives; with --policy they would contradict it. */
const POLICY_GIVES = [
  "family",
  "org",
  "env",
  "version",
  "require-binding",
  "require-evidence",
  "lifecycle",
  "availability",
  "consequence",
  "max-age",
  "status-max-age",
  "history",
] as const;

/** `--policy` and its companions, or undefined without it. */
function policyFlags(values: Values): PolicyFlags | undefined {
  if (values.policy === undefined) {
    const misplaced = (["action", "amount", "resource"] as const).find((name) => values[name] !== undefined);
    if (misplaced) throw new UsageError(`--${misplaced} needs --policy FILE`);
    return undefined;
  }
  const given = POLICY_GIVES.find((name) => values[name] !== undefined);
  if (given)
    throw new UsageError(`--${given} and --policy contradict each other: the policy's action says what to expect`);
  if (values.action === undefined) throw new UsageError("--policy needs --action NAME, the policy action to decide");
  let amount: PolicyFlags["amount"];
  if (values.amount !== undefined) {
    const match = /^((?:0|[1-9]\d{0,17})(?:\.\d{1,8})?):([A-Z]{3})$/.exec(values.amount);
    if (!match) throw new UsageError(`--amount: "${values.amount}" is not VALUE:CURRENCY (e.g. 50.00:EUR)`);
    amount = { value: match[1] as string, currency: match[2] as string };
  }
  return {
    file: values.policy,
    action: values.action,
    ...(amount ? { amount } : {}),
    ...(values.resource !== undefined ? { resource: values.resource } : {}),
  };
}

function duration(value: string, flag: string): number {
  const seconds = durationSeconds(value);
  if (seconds === undefined)
    throw new UsageError(`${flag}: "${value}" is not a duration (e.g. 30, 90s, 15m, 12h, 30d)`);
  return seconds;
}

function commaList(value: string): string[] {
  return value
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
}

/** `claim` or `claim:maxAge`; a suffix that is not a duration belongs to the claim (claims may contain colons). */
function evidenceRequirement(value: string): { claim: string; maxAge?: number } {
  const colon = value.lastIndexOf(":");
  if (colon > 0) {
    const maxAge = durationSeconds(value.slice(colon + 1));
    if (maxAge !== undefined) return { claim: value.slice(0, colon), maxAge };
  }
  if (!value) throw new UsageError("--require-evidence needs a claim name");
  return { claim: value };
}

const PROOF_OPTIONS = ["jwks", "insecure-no-signature", "history", "seen"] as const;
const LOG_OPTIONS = ["log", "log-max-age", "log-scan", "witness", "witness-quorum", "log-state"] as const;

function wholeNumber(value: string, flag: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${flag}: "${value}" is not a whole number`);
  }
  return Number(value);
}

/** The remembered-checkpoint file: the flag, else $PASSPORT_LOG_STATE, else the user's state directory. */
function stateFile(values: Values, env: Record<string, string | undefined>): string | undefined {
  if (values["log-state"] !== undefined) return values["log-state"];
  if (env.PASSPORT_LOG_STATE) return env.PASSPORT_LOG_STATE;
  const dir = env.XDG_STATE_HOME || (env.HOME ? `${env.HOME}/.local/state` : undefined);
  return dir ? `${dir}/passport/log-checkpoints.json` : undefined;
}

function logFlags(values: Values, env: Record<string, string | undefined>): LogFlags | undefined {
  if (values.log === undefined) {
    const misplaced = LOG_OPTIONS.find((name) => values[name] !== undefined);
    if (misplaced) throw new UsageError(`--${misplaced} needs --log, the log key you pinned`);
    return undefined;
  }
  const witnesses = values.witness ?? [];
  const quorum =
    values["witness-quorum"] === undefined ? undefined : wholeNumber(values["witness-quorum"], "--witness-quorum");
  if (quorum !== undefined && quorum > witnesses.length) {
    throw new UsageError(`--witness-quorum ${quorum} is more than the ${witnesses.length} --witness keys given`);
  }
  const state = stateFile(values, env);
  return {
    key: values.log,
    maxAge: values["log-max-age"] === undefined ? 3600 : duration(values["log-max-age"], "--log-max-age"),
    scan: values["log-scan"] === undefined ? 256 : wholeNumber(values["log-scan"], "--log-scan"),
    witnesses,
    ...(quorum !== undefined ? { quorum } : {}),
    ...(state ? { state } : {}),
  };
}

/** `VERSION:DIGEST`, for example `3:sha-256:Qx…`. */
function seenVersion(value: string): SeenVersion {
  const colon = value.indexOf(":");
  const version = Number(value.slice(0, colon));
  const digest = value.slice(colon + 1);
  if (colon < 1 || !Number.isInteger(version) || version < 1 || !/^sha-256:[A-Za-z0-9_-]{43}$/.test(digest)) {
    throw new UsageError(`--seen: "${value}" is not VERSION:DIGEST (e.g. 3:sha-256:…)`);
  }
  return { record_version: version, digest };
}

function bindingRequirement(value: string): RequiredBinding {
  const eq = value.indexOf("=");
  const cls = eq < 0 ? value : value.slice(0, eq);
  if (!/^[a-z_]+$/.test(cls)) throw new UsageError(`--require-binding: "${cls}" is not a binding class`);
  return eq < 0 ? { class: cls } : { class: cls, value: value.slice(eq + 1) };
}

function commonFlags(values: Values, env: Record<string, string | undefined>): Common {
  const resolver = values.resolver ?? env.PASSPORT_RESOLVER ?? "http://127.0.0.1:8787";
  const unsafe = insecureAddress(resolver);
  if (unsafe) throw new UsageError(`--resolver: "${resolver}" ${unsafe}`);
  const retries = values.retries === undefined ? 2 : Number(values.retries);
  if (!Number.isInteger(retries) || retries < 0 || retries > 10)
    throw new UsageError("--retries must be a whole number from 0 to 10");
  const log = logFlags(values, env);
  return {
    resolver,
    resolverFrom:
      values.resolver !== undefined
        ? "--resolver"
        : env.PASSPORT_RESOLVER !== undefined
          ? "PASSPORT_RESOLVER"
          : "the default",
    json: values.json ?? false,
    timeoutMs: values.timeout === undefined ? 5000 : duration(values.timeout, "--timeout") * 1000,
    retries,
    ...(values.jwks !== undefined ? { jwks: values.jwks } : {}),
    insecureNoSignature: values["insecure-no-signature"] ?? false,
    ...(log ? { log } : {}),
  };
}

/** `passport log`: audits a range of the log; needs the pinned log key, takes no identity id. */
function logCommand(values: Values, extra: string[], env: Record<string, string | undefined>): Command {
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const misplaced = [...VERIFY_ONLY, ...PROOF_OPTIONS, "log-max-age", "log-scan"].find(
    (name) => values[name as keyof Values] !== undefined,
  );
  if (misplaced) throw new UsageError(`--${misplaced} does not apply to log`);
  if (values.log === undefined) throw new UsageError("log needs --log KEY|FILE, the log's verifier key you pinned");
  const from = values.from === undefined ? undefined : wholeNumber(values.from, "--from");
  const to = values.to === undefined ? undefined : wholeNumber(values.to, "--to");
  if (from !== undefined && to !== undefined && from > to) throw new UsageError("--from must not be after --to");
  return {
    command: "log",
    common: commonFlags(values, env),
    range: { ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) },
  };
}

/** The keys every record is checked with: --jwks, or the explicit opt-out, never neither nor both. */
function requireKeys(command: string, values: Values): void {
  if (values["insecure-no-signature"] && values.jwks !== undefined) {
    throw new UsageError("--jwks and --insecure-no-signature contradict each other; pick one");
  }
  if (!values["insecure-no-signature"] && values.jwks === undefined) {
    throw new UsageError(
      `${command} needs --jwks FILE|URL, the public keys you trust to sign records (the service publishes its set at /.well-known/jwks.json; pin a copy). To check without keys, say --insecure-no-signature.`,
    );
  }
}

/** `passport verify-card <url> [identity-id]`: an A2A agent card checked against a passport's proven keys. */
function verifyCardCommand(values: Values, args: string[], env: Record<string, string | undefined>): Command {
  const [url, identityId, ...extra] = args;
  if (!url) throw new UsageError("verify-card needs the agent card's URL");
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const unsafe = insecureAddress(url);
  if (unsafe) throw new UsageError(`verify-card: "${url}" ${unsafe}`);
  if (identityId !== undefined && !identityId.toLowerCase().startsWith("psp_")) {
    throw new UsageError(`verify-card: "${identityId}" is not an identity id (psp_…)`);
  }
  const misplaced = [...VERIFY_ONLY, "history", "seen", ...LOG_OPTIONS].find(
    (name) => values[name as keyof Values] !== undefined,
  );
  if (misplaced) throw new UsageError(`--${misplaced} does not apply to verify-card`);
  requireKeys("verify-card", values);
  return {
    command: "verify-card",
    url,
    ...(identityId !== undefined ? { identityId } : {}),
    common: commonFlags(values, env),
  };
}

/**
 * Parses the command line into a command, or throws {@link UsageError}.
 * @example
 * parseCommand(["verify", "psp_...", "--family", "api"], {});
 */
export function parseCommand(argv: string[], env: Record<string, string | undefined>): Command {
  const { values, positionals } = parseFlags(argv);
  const [command, target, ...extra] = positionals;
  if (values.help || command === "help" || command === undefined) return { command: "help" };
  if (command === "verify-card") {
    if (values.from !== undefined || values.to !== undefined) throw new UsageError("--from and --to apply to log only");
    return verifyCardCommand(values, positionals.slice(1), env);
  }
  if (command !== "resolve" && command !== "verify" && command !== "envelope" && command !== "log") {
    throw new UsageError(`unknown command "${command}"`);
  }
  if (command !== "log" && (values.from !== undefined || values.to !== undefined)) {
    throw new UsageError(`--${values.from !== undefined ? "from" : "to"} applies to log only`);
  }
  if (command === "log") return logCommand(values, positionals.slice(1), env);
  if (!target)
    throw new UsageError(
      `${command} needs ${command === "envelope" ? "a manifest URL or an identity id" : "an identity id"}`,
    );
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  if (command !== "verify") {
    const misplaced = VERIFY_ONLY.find((name) => values[name] !== undefined);
    if (misplaced) throw new UsageError(`--${misplaced} applies to verify only`);
  }
  if (command === "envelope") {
    const misplaced = [...PROOF_OPTIONS, ...LOG_OPTIONS].find((name) => values[name] !== undefined);
    if (misplaced) throw new UsageError(`--${misplaced} applies to resolve and verify only`);
  }
  if (command !== "envelope") requireKeys(command, values);
  if (command === "envelope" && !target.toLowerCase().startsWith("psp_") && !/^https?:\/\//.test(target)) {
    throw new UsageError("envelope needs an http(s) agent manifest URL or an identity id");
  }

  const common = commonFlags(values, env);

  const expectation: Expectation = {};
  if (values.family !== undefined) {
    if (values.family !== "api" && values.family !== "agent") throw new UsageError("--family must be api or agent");
    expectation.family = values.family;
  }
  if (values.org !== undefined) expectation.organisation = values.org;
  if (values.env !== undefined) expectation.environment = values.env;
  if (values.version !== undefined) expectation.version = values.version;
  if (values["base-url"] !== undefined) {
    if (!/^https?:\/\//.test(values["base-url"]) || !URL.canParse(values["base-url"])) {
      throw new UsageError("--base-url must be an http(s) URL");
    }
    expectation.baseUrl = values["base-url"];
  }
  if (values["require-binding"]) expectation.bindings = values["require-binding"].map(bindingRequirement);
  if (values["require-evidence"]) expectation.evidence = values["require-evidence"].map(evidenceRequirement);
  if (values.lifecycle !== undefined) expectation.lifecycle = commaList(values.lifecycle);
  if (values.availability !== undefined) expectation.availability = commaList(values.availability);
  if (values.consequence !== undefined) {
    if (!CONSEQUENCES.includes(values.consequence as Consequence)) {
      throw new UsageError(`--consequence must be one of ${CONSEQUENCES.join(", ")}`);
    }
    expectation.consequence = values.consequence as Consequence;
  }
  if (values["max-age"] !== undefined) expectation.maxAge = duration(values["max-age"], "--max-age");
  if (values.history) expectation.history = true;
  if (values.seen !== undefined) expectation.seen = seenVersion(values.seen);
  if (values["status-max-age"] !== undefined) {
    expectation.statusMaxAge = duration(values["status-max-age"], "--status-max-age");
  }
  if (values["record-signature"] !== undefined && values["record-file"] === undefined) {
    throw new UsageError("--record-signature needs --record-file");
  }
  const supplied: Supplied = {
    ...(values["record-file"] !== undefined ? { recordFile: values["record-file"] } : {}),
    ...(values["record-signature"] !== undefined ? { recordSignature: values["record-signature"] } : {}),
    ...(values["status-token"] !== undefined ? { statusToken: values["status-token"] } : {}),
  };
  const policy = command === "verify" ? policyFlags(values) : undefined;
  return { command, target, common, expectation, supplied, ...(policy ? { policy } : {}) };
}
