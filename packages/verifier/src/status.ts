import { base64urlDecode, type KeyLookup, STATUS_TOKEN_TYPE, strictJsonParse } from "@passport/protocol";
import { fetchWithRetry, type HttpPolicy, readProblem, readStrictJson } from "./http.ts";
import type { NetworkFailureKind, StaleItem, StatusProblem } from "./outcome.ts";
import type { AvailabilitySignal, Lifecycle, PassportRecordView } from "./record.ts";
import { VerifiedMemo } from "./verified-memo.ts";

/** The response header an API provider staples its passport's status token in (docs/verifier.md, Current proof). */
export const STATUS_HEADER = "Passport-Status";
/** The resolver route that answers a passport's current status token. */
export const statusPath = (identityId: string): string => `/api/p/${encodeURIComponent(identityId)}/status`;
/** Largest status route answer read: a token is well under 2 KB. */
const MAX_STATUS_BYTES = 65_536;

/** What the status route answered: a token (not yet checked), no usable token, or no answer at all. */
type StatusTokenAnswer =
  | { token: string }
  | { unavailable: string }
  | {
      url: string;
      network: { kind: NetworkFailureKind; attempts: number; status?: number; problem_type?: string; detail: string };
    };

/**
 * Reads a passport's current status token from the resolver's status route (`http`'s timeout,
 * retries and same-origin redirects; the body capped at 64 KB and read as strict JSON). The token
 * is not checked here: pass it to {@link checkStatusToken}.
 * @example
 * const answer = await fetchStatusToken("https://resolver.example", id, http);
 * if ("token" in answer) await checkStatusToken(answer.token, keys, id, Date.now(), 60);
 */
export async function fetchStatusToken(
  resolver: string,
  identityId: string,
  http: HttpPolicy,
  signal?: AbortSignal,
): Promise<StatusTokenAnswer> {
  const url = `${resolver}${statusPath(identityId)}`;
  const answer = await fetchWithRetry(url, { headers: { accept: "application/json" } }, http, signal);
  if (!answer.ok) {
    const { ok: _, problemType, ...failure } = answer;
    return {
      url,
      network: {
        ...failure,
        ...(problemType ? { problem_type: problemType } : {}),
        detail: `the current status could not be read: ${failure.detail}`,
      },
    };
  }
  const { response } = answer;
  if (response.status !== 200) {
    const problem = await readProblem(response);
    return { unavailable: `the status route answered ${response.status}${problem.type ? ` ${problem.type}` : ""}` };
  }
  const read = await readStrictJson(response, Math.min(http.maxBytes, MAX_STATUS_BYTES));
  if (!read.ok) return { unavailable: `the status route's answer is not usable: ${read.problem}` };
  const token = (read.value as { token?: unknown } | null)?.token;
  return typeof token === "string" ? { token } : { unavailable: "the status route's answer holds no token" };
}

/** How far a token's `iat` may lie ahead of this clock (clocks differ a little). */
const CLOCK_SKEW_SECONDS = 5;

/** The claims of a status token, as the service signs them (`/schemas/passport-status.json`). */
export interface StatusClaims {
  identity_id: string;
  family: "api" | "agent";
  lifecycle: Lifecycle;
  availability?: AvailabilitySignal;
  publication: "published" | "pending";
  record_version?: number;
  digest?: string;
  pending_version?: number;
  next_attempt_at?: string;
  iat: number;
  exp: number;
}

export type { StatusProblem };

export type StatusCheck =
  | { ok: true; claims: StatusClaims; kid?: string }
  | { ok: false; problem: StatusProblem; detail: string; kid?: string };

const decoder = new TextDecoder();

/**
 * Tokens whose signature verified, per key set (verified-memo.ts): a provider staples the same token
 * on every answer until shortly before it expires, so a consumer sees it many times. The token's
 * text is the whole signed input; its identity and times are checked on every use.
 */
const verifiedTokens = new VerifiedMemo<{ claims: StatusClaims; kid: string }>(256);

function readPart(part: string | undefined): Record<string, unknown> | undefined {
  const bytes = part === undefined ? undefined : base64urlDecode(part);
  if (!bytes) return undefined;
  const read = strictJsonParse(decoder.decode(bytes));
  return read.ok && typeof read.value === "object" && read.value !== null && !Array.isArray(read.value)
    ? (read.value as Record<string, unknown>)
    : undefined;
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const optional = (v: unknown, test: (v: unknown) => boolean) => v === undefined || test(v);
const isString = (v: unknown) => typeof v === "string";

function claimsOf(payload: Record<string, unknown>): StatusClaims | undefined {
  const p = payload;
  const ok =
    isString(p.identity_id) &&
    (p.family === "api" || p.family === "agent") &&
    isString(p.lifecycle) &&
    optional(p.availability, isString) &&
    (p.publication === "published" || p.publication === "pending") &&
    optional(p.record_version, isInt) &&
    optional(p.digest, isString) &&
    optional(p.pending_version, isInt) &&
    optional(p.next_attempt_at, isString) &&
    isInt(p.iat) &&
    isInt(p.exp);
  return ok ? (p as unknown as StatusClaims) : undefined;
}

/**
 * Checks a status token offline: a compact JWS (ES256, `typ` passport-status+jwt) signed by a key
 * the caller pinned, about `identityId`, not expired, and issued no more than `maxAgeSeconds`
 * before `now` (milliseconds). Without keys (`signature: "skip-insecure"`) the claims are read but
 * the signature is not checked, as for records.
 * @example
 * const check = await checkStatusToken(response.headers.get("passport-status") ?? "", ring, id, Date.now(), 30);
 * if (check.ok) check.claims.record_version;
 */
export async function checkStatusToken(
  token: string,
  keys: KeyLookup | undefined,
  identityId: string,
  now: number,
  maxAgeSeconds: number,
): Promise<StatusCheck> {
  const known = keys ? verifiedTokens.get(keys, token) : undefined;
  if (known) return checkClaims({ claims: known.claims, kid: known.kid, signed: true, identityId, now, maxAgeSeconds });
  const parts = token.trim().split(".");
  const header = readPart(parts[0]);
  const payload = readPart(parts[1]);
  const signature = parts[2] === undefined ? undefined : base64urlDecode(parts[2]);
  const claims = payload && claimsOf(payload);
  if (parts.length !== 3 || !header || !claims || !signature) {
    return { ok: false, problem: "malformed", detail: "not a status token (a compact JWS with the status claims)" };
  }
  if (header.alg !== "ES256" || header.typ !== STATUS_TOKEN_TYPE || typeof header.kid !== "string") {
    return {
      ok: false,
      problem: "malformed",
      detail: `the header is not ES256 with typ ${STATUS_TOKEN_TYPE} and a kid`,
    };
  }
  const kid = header.kid;
  if (keys) {
    const key = keys.key(kid);
    if (!key) return { ok: false, problem: "unknown_key", kid, detail: `signed with key ${kid}, which is not pinned` };
    const input = new TextEncoder().encode(`${parts[0]}.${parts[1]}`);
    const valid = await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, await key, signature, input);
    if (!valid) return { ok: false, problem: "signature_invalid", kid, detail: "the signature does not verify" };
    verifiedTokens.remember(keys, token, { claims, kid });
  }
  return checkClaims({ claims, kid, signed: keys !== undefined, identityId, now, maxAgeSeconds });
}

/** The checks of a token's claims that depend on the call: identity and times (`signed`: its signature was checked). */
function checkClaims(checked: {
  claims: StatusClaims;
  kid: string;
  signed: boolean;
  identityId: string;
  now: number;
  maxAgeSeconds: number;
}): StatusCheck {
  const { claims, kid, signed, identityId, now, maxAgeSeconds } = checked;
  if (claims.identity_id !== identityId) {
    return { ok: false, problem: "other_identity", kid, detail: `the token is about ${claims.identity_id}` };
  }
  const seconds = now / 1000;
  if (claims.iat > seconds + CLOCK_SKEW_SECONDS) {
    return { ok: false, problem: "not_yet_valid", kid, detail: "issued in the future; check the clock" };
  }
  if (seconds >= claims.exp) return { ok: false, problem: "expired", kid, detail: "the token has expired" };
  if (seconds - claims.iat > maxAgeSeconds) {
    return {
      ok: false,
      problem: "too_old",
      kid,
      detail: `issued ${Math.round(seconds - claims.iat)} s ago, more than the ${maxAgeSeconds} s allowed`,
    };
  }
  return { ok: true, claims, ...(signed ? { kid } : {}) };
}

/**
 * Compares a checked token with the record a decision relies on: nothing when the token states
 * that this very record (version and digest) is the newest and nothing newer is owed, else the
 * stale item that says why not.
 */
export function compareWithRecord(claims: StatusClaims, record: PassportRecordView): StaleItem | undefined {
  const base = {
    what: "status" as const,
    ...(claims.record_version !== undefined ? { current_version: claims.record_version } : {}),
  };
  if (claims.publication === "pending") {
    return {
      ...base,
      problem: "publication_pending",
      ...(claims.pending_version !== undefined ? { pending_version: claims.pending_version } : {}),
      ...(claims.next_attempt_at ? { next_attempt_at: claims.next_attempt_at } : {}),
    };
  }
  if (claims.record_version === record.record_version && claims.digest === record.digest) return undefined;
  const older = claims.record_version !== undefined && (record.record_version ?? 0) < claims.record_version;
  return { ...base, problem: older ? "record_superseded" : "record_mismatch" };
}
