// Signed A2A agent cards checked against a passport (docs/verifier.md, "Signed A2A agent cards").
// A2A lets an agent card carry JWS signatures (A2A specification section 8.4): each covers the
// RFC 8785 canonical JSON of the card without its `signatures` member, as a detached payload. The
// specification leaves open whose keys a verifier should trust; here it is the keys the service
// proved for the agent's passport (a verified, fresh `signing_keys` binding), so a card counts only
// when it is signed by a key the passport's owner demonstrably controls.
import { base64urlDecode, base64urlEncode, canonicalJson, sha256 } from "@passport/protocol";
import { provenKeys, SIGNING_KEYS_CLASS } from "./caller.ts";
import { type FetchLike, insecureAddress, platformFetch, readStrictJson } from "./http.ts";
import type { PassportRecordView, RecordWithdrawnKey } from "./record.ts";

/** One entry of a card's `signatures` (A2A section 8.4.2). */
export interface AgentCardSignature {
  /** base64url of the JWS protected header (JSON with `alg`, and `kid` or `jwk`). */
  protected: string;
  /** base64url of the signature over `protected` "." base64url(canonical card). */
  signature: string;
  /** Unprotected header members; only its `kid` is read, to find the key. */
  header?: Record<string, unknown>;
}

/** Why a card does not count as signed by the passport. */
export type AgentCardProblem =
  /** Not a JSON object, or its `signatures` is not a list of JWS signature objects. */
  | "card_malformed"
  /** The card carries no signatures. */
  | "card_unsigned"
  /** The passport has no verified, fresh `signing_keys` binding: it proves no key at all. */
  | "passport_keys_unproven"
  /** No signature is by a key the passport proves, nor by one it withdrew: a key it never proved. */
  | "key_not_proven"
  /**
   * No signature is by a key the passport proves, and one is by a key it proved before: its key
   * directory stopped serving it (a rotation), as the record's `withdrawn_keys` says.
   */
  | "key_withdrawn"
  /** A signature by a proven key does not verify over this card (it was changed after signing). */
  | "signature_invalid"
  /** A proven key's public half could not be read from its key directory. */
  | "key_unavailable";

/** A signature that verified, by a key the passport proves. */
export interface ProvenCardSignature {
  /** Position in the card's `signatures`. */
  index: number;
  /** The key's RFC 7638 SHA-256 thumbprint, as the record publishes it. */
  thumbprint: string;
  alg: string;
  /** The `signing_keys` binding value (key directory URL) that proves the key. */
  directory: string;
}

export type AgentCardCheck =
  | { ok: true; identityId: string; signatures: ProvenCardSignature[] }
  | { ok: false; problem: AgentCardProblem; detail: string };

export interface AgentCardOptions {
  /** When the proofs must be fresh; default now. */
  now?: number;
  /**
   * Reads a key directory for a signature that names its key by `kid` rather than carrying it
   * (`jwk` in the protected header); default the platform's `fetch`.
   */
  fetch?: FetchLike;
  /** Per key directory read; default 3000. */
  timeoutMs?: number;
}

/** The JWS algorithms accepted, each with the key it needs and how Web Crypto verifies with it. */
interface JwsAlgorithm {
  kty: string;
  crv: string;
  import: { name: string; namedCurve?: string };
  verify: { name: string; hash?: string };
}
const ALGORITHMS: Record<string, JwsAlgorithm> = {
  EdDSA: { kty: "OKP", crv: "Ed25519", import: { name: "Ed25519" }, verify: { name: "Ed25519" } },
  Ed25519: { kty: "OKP", crv: "Ed25519", import: { name: "Ed25519" }, verify: { name: "Ed25519" } },
  ES256: {
    kty: "EC",
    crv: "P-256",
    import: { name: "ECDSA", namedCurve: "P-256" },
    verify: { name: "ECDSA", hash: "SHA-256" },
  },
};

/** The members of each key type a thumbprint covers (RFC 7638 section 3.2). */
const THUMBPRINT_MEMBERS: Record<string, readonly string[]> = {
  OKP: ["crv", "kty", "x"],
  EC: ["crv", "kty", "x", "y"],
  RSA: ["e", "kty", "n"],
};

const MAX_DIRECTORY_BYTES = 64 * 1024;
const MAX_SIGNATURES = 10;
const encoder = new TextEncoder();

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fail(problem: AgentCardProblem, detail: string): AgentCardCheck {
  return { ok: false, problem, detail };
}

/** The RFC 7638 SHA-256 thumbprint of a public JWK, base64url; undefined when it lacks its members. */
function jwkThumbprintOf(jwk: Record<string, unknown>): string | undefined {
  const members = typeof jwk.kty === "string" ? THUMBPRINT_MEMBERS[jwk.kty] : undefined;
  if (!members || members.some((name) => typeof jwk[name] !== "string")) return undefined;
  const required = Object.fromEntries(members.map((name) => [name, jwk[name]]));
  return base64urlEncode(sha256(encoder.encode(canonicalJson(required))));
}

/** The bytes every signature of `card` covers: the canonical JSON of the card minus `signatures`. */
export function agentCardPayload(card: Record<string, unknown>): string {
  const { signatures: _signatures, ...unsigned } = card;
  return base64urlEncode(encoder.encode(canonicalJson(unsigned)));
}

function protectedHeader(signature: AgentCardSignature): Record<string, unknown> | undefined {
  const bytes = base64urlDecode(signature.protected);
  if (!bytes) return undefined;
  try {
    const header: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
    return isObject(header) ? header : undefined;
  } catch {
    return undefined;
  }
}

function readSignatures(card: Record<string, unknown>): AgentCardSignature[] | undefined {
  const listed = card.signatures;
  if (listed === undefined) return [];
  if (!Array.isArray(listed)) return undefined;
  const valid = listed.every(
    (entry) =>
      isObject(entry) &&
      typeof entry.protected === "string" &&
      typeof entry.signature === "string" &&
      (entry.header === undefined || isObject(entry.header)),
  );
  return valid ? (listed as AgentCardSignature[]) : undefined;
}

async function directoryKey(
  url: string,
  thumbprint: string,
  options: AgentCardOptions,
): Promise<Record<string, unknown> | string> {
  const unsafe = insecureAddress(url);
  if (unsafe) return `the key directory ${unsafe}`;
  let response: Response;
  try {
    response = await (options.fetch ?? platformFetch)(url, {
      headers: {
        accept: "application/http-message-signatures-directory+json, application/jwk-set+json, application/json",
      },
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs ?? 3000),
    });
  } catch (error) {
    return `the key directory could not be reached (${(error as Error).name})`;
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    return `the key directory answered ${response.status}`;
  }
  const read = await readStrictJson(response, MAX_DIRECTORY_BYTES);
  if (!read.ok) return `the key directory is not usable: ${read.problem}`;
  const keys = isObject(read.value) && Array.isArray(read.value.keys) ? read.value.keys : [];
  const key = keys.find((k): k is Record<string, unknown> => isObject(k) && jwkThumbprintOf(k) === thumbprint);
  return key ?? "the key directory does not hold this key";
}

async function verifies(
  jwk: Record<string, unknown>,
  alg: string,
  signature: AgentCardSignature,
  payload: string,
): Promise<boolean> {
  const algorithm = ALGORITHMS[alg];
  const bytes = base64urlDecode(signature.signature);
  if (!algorithm || !bytes || jwk.kty !== algorithm.kty || jwk.crv !== algorithm.crv) return false;
  // The key material alone: a directory's `alg`, `use` or `key_ops` would narrow or refuse the import.
  const material = Object.fromEntries(
    (THUMBPRINT_MEMBERS[algorithm.kty] ?? []).map((name) => [name, jwk[name]]),
  ) as unknown as JsonWebKey;
  try {
    const key = await crypto.subtle.importKey("jwk", material, algorithm.import, false, ["verify"]);
    return await crypto.subtle.verify(
      algorithm.verify,
      key,
      bytes,
      encoder.encode(`${signature.protected}.${payload}`),
    );
  } catch {
    return false;
  }
}

/** The keys the record's verified `signing_keys` bindings say their directories no longer serve. */
function withdrawnKeys(record: PassportRecordView): RecordWithdrawnKey[] {
  return record.bindings.flatMap((binding) =>
    binding.class === SIGNING_KEYS_CLASS && binding.verification?.state === "verified"
      ? (binding.withdrawn_keys ?? [])
      : [],
  );
}

/**
 * Checks an A2A agent card's JWS signatures against the keys `record`'s passport proves (its
 * verified, fresh `signing_keys` bindings). The card counts when at least one signature is by a
 * proven key and every signature by a proven key verifies over the card; signatures by other keys
 * (another party's endorsement) are left aside. A signature names its key by the thumbprint, or
 * the `kid` the record publishes, in `kid`, or carries it as `jwk` in its protected header; a key
 * named by `kid` is read from the binding's key directory. Whether the passport itself may be
 * relied on (its status, its organisation) is `verify`'s answer, not this one's.
 * @example
 * const resolved = await verifier.resolve(card.passport ?? identityId);
 * if (resolved.ok) {
 *   const check = await verifyAgentCard(card, resolved.record);
 *   if (!check.ok) console.log(check.problem, check.detail);
 * }
 */
export async function verifyAgentCard(
  card: unknown,
  record: PassportRecordView,
  options: AgentCardOptions = {},
): Promise<AgentCardCheck> {
  if (!isObject(card)) return fail("card_malformed", "The agent card is not a JSON object.");
  const signatures = readSignatures(card);
  if (!signatures) return fail("card_malformed", "The card's signatures are not a list of JWS signature objects.");
  if (signatures.length === 0) return fail("card_unsigned", "The agent card carries no signatures.");
  if (signatures.length > MAX_SIGNATURES) {
    return fail(
      "card_malformed",
      `The card carries ${signatures.length} signatures; at most ${MAX_SIGNATURES} are checked.`,
    );
  }
  const proven = provenKeys(record, options.now ?? Date.now());
  if (proven.length === 0) {
    return fail(
      "passport_keys_unproven",
      `${record.identity_id} has no verified, fresh signing_keys binding, so it proves no key.`,
    );
  }
  let payload: string;
  try {
    payload = agentCardPayload(card);
  } catch {
    return fail("card_malformed", "The agent card has no canonical JSON form.");
  }
  const withdrawn = withdrawnKeys(record);
  const withdrawnBy: { index: number; key: RecordWithdrawnKey }[] = [];
  const accepted: ProvenCardSignature[] = [];
  for (const [index, signature] of signatures.entries()) {
    const header = protectedHeader(signature);
    if (!header) return fail("card_malformed", `Signature ${index}'s protected header is not base64url JSON.`);
    const embedded = isObject(header.jwk) ? header.jwk : undefined;
    const kid = typeof header.kid === "string" ? header.kid : signature.header?.kid;
    const thumbprint = embedded
      ? jwkThumbprintOf(embedded)
      : proven.find((entry) => entry.key.thumbprint === kid || (entry.key.kid !== undefined && entry.key.kid === kid))
          ?.key.thumbprint;
    const match = proven.find((entry) => entry.key.thumbprint === thumbprint);
    if (!match || !thumbprint) {
      const gone = withdrawn.find((key) => key.thumbprint === (thumbprint ?? kid));
      if (gone) withdrawnBy.push({ index, key: gone });
      continue;
    }
    const alg = typeof header.alg === "string" ? header.alg : "";
    // RFC 7515 section 4.1.11: a header extension the verifier does not understand voids the signature.
    if (header.crit !== undefined || !ALGORITHMS[alg]) {
      return fail(
        "signature_invalid",
        `Signature ${index} (key ${thumbprint}) uses ${alg || "no algorithm"} or a critical extension this verifier does not accept.`,
      );
    }
    // The record carries the proven key itself (newer records); otherwise it is read from its directory.
    const published = match.key.jwk && jwkThumbprintOf(match.key.jwk) === thumbprint ? match.key.jwk : undefined;
    const jwk = embedded ?? published ?? (await directoryKey(match.directory, thumbprint, options));
    if (typeof jwk === "string") return fail("key_unavailable", `Signature ${index} (key ${thumbprint}): ${jwk}.`);
    if (!(await verifies(jwk, alg, signature, payload))) {
      return fail(
        "signature_invalid",
        `Signature ${index} by proven key ${thumbprint} does not verify over this card.`,
      );
    }
    accepted.push({ index, thumbprint, alg, directory: match.directory });
  }
  if (accepted.length === 0) {
    if (withdrawnBy.length > 0) {
      const { index, key } = withdrawnBy[0] as { index: number; key: RecordWithdrawnKey };
      return fail(
        "key_withdrawn",
        `Signature ${index} is by key ${key.thumbprint}, which ${record.identity_id} proved before and withdrew from its key directory (found gone ${key.withdrawn_at}); no signature is by a key it proves now.`,
      );
    }
    return fail(
      "key_not_proven",
      `None of the card's ${signatures.length} signatures is by a key ${record.identity_id} proves.`,
    );
  }
  return { ok: true, identityId: record.identity_id, signatures: accepted };
}

/** The largest agent card read: cards are small documents; a larger answer is not one. */
const MAX_CARD_BYTES = 256 * 1024;

export type AgentCardFetch = { ok: true; card: unknown } | { ok: false; detail: string };

/**
 * Fetches an A2A agent card (for example `https://agent.example/.well-known/agent-card.json`):
 * https only (plain http to a loopback address), no redirect followed, at most 256 KiB of strict
 * JSON. The card is returned as read; `verifyAgentCard` decides what it proves.
 * @example
 * const fetched = await fetchAgentCard("https://agent.example/.well-known/agent-card.json");
 * if (fetched.ok) await verifyAgentCard(fetched.card, record);
 */
export async function fetchAgentCard(
  url: string,
  options: Pick<AgentCardOptions, "fetch" | "timeoutMs"> = {},
): Promise<AgentCardFetch> {
  const unsafe = insecureAddress(url);
  if (unsafe) return { ok: false, detail: `the card URL ${unsafe}` };
  let response: Response;
  try {
    response = await (options.fetch ?? platformFetch)(url, {
      headers: { accept: "application/json" },
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs ?? 3000),
    });
  } catch (error) {
    return { ok: false, detail: `the card could not be fetched (${(error as Error).name})` };
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    return { ok: false, detail: `the card URL answered ${response.status}` };
  }
  const read = await readStrictJson(response, MAX_CARD_BYTES);
  return read.ok ? { ok: true, card: read.value } : { ok: false, detail: `the card is not usable: ${read.problem}` };
}
