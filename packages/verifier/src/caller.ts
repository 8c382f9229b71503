// Reciprocal trust (docs/reciprocal-trust.md): what the verifier needs to know of a calling agent's
// signed request. The signature itself is checked by a `CallerSignatures` implementation (the
// RFC 9421 / Web Bot Auth one is in `@passport/verifier/provider`), so this module, and with it the
// package root, stays free of dependencies.
import type { PassportRecordView } from "./record.ts";

/** The request header naming the calling agent's passport: an identity id, not a proof of it. */
export const PASSPORT_AGENT_HEADER = "Passport-Agent";

/** The binding class of a passport's request-signing keys (a key directory or JWK Set URL). */
export const SIGNING_KEYS_CLASS = "signing_keys";

/** Default maximum age of a request signature, from `created` (and the most `expires - created` may be). */
export const DEFAULT_SIGNATURE_WINDOW_SECONDS = 60;

/** A key the service saw in a verified `signing_keys` binding's directory at its last successful check. */
export interface ProvenKey {
  /** RFC 7638 JWK SHA-256 thumbprint, base64url: the `keyid` a request is signed with. */
  thumbprint: string;
  kid?: string;
  alg?: string;
  /** The public key itself, when the record carries it. */
  jwk?: Record<string, string>;
}

/** Why a caller's signature does not count. */
export type CallerSignatureProblem =
  /** No `Signature` / `Signature-Input` headers, or no `Passport-Agent` header. */
  | "signature_missing"
  /** The headers do not parse, the tag is not Web Bot Auth's, or the signature does not verify. */
  | "signature_invalid"
  /** Outside its window: expired, created in the future, older than the window, or valid for longer than it. */
  | "signature_expired"
  /** The nonce was seen before within the window. */
  | "signature_replayed"
  /** The keyid is not a key of a verified, fresh `signing_keys` binding of the named passport. */
  | "key_not_proven"
  /** The key is proven, but its public key could not be read from the key directory now. */
  | "key_unavailable"
  /**
   * The key is not known yet, and the lookups that requests not yet verified may cause (this
   * client's, or all clients' together) are spent for now: asked again shortly, it is decided.
   */
  | "lookups_exhausted";

export type CallerSignatureCheck =
  | {
      ok: true;
      /** The signature's keyid (the key's RFC 7638 thumbprint). */
      keyid: string;
      thumbprint: string;
      created: string;
      expires?: string;
      nonce?: string;
      /** The `signing_keys` binding value (key directory URL) the key is proven by. */
      directory: string;
    }
  | { ok: false; problem: CallerSignatureProblem; detail: string; keyid?: string };

/** Whether a nonce is new; a store remembers each one until its signature's window has passed. */
export interface NonceStore {
  /** True the first time `nonce` is offered before `until` (ms since the epoch), false after. */
  firstSeen(nonce: string, until: number): boolean | Promise<boolean>;
}

/**
 * The lookups (the calling passport's record and status) that requests not yet verified may
 * cause: a request whose signature could not be checked before its passport is read spends one.
 */
export interface LookupBudget {
  /** True when `client` (undefined: unknown) may cause one more lookup at `now`; spends it. */
  take(client: string | undefined, now: number): boolean;
  /** Gives back the lookup `take` spent for a request whose signature then verified: only forgeries stay spent. */
  refund?(client: string | undefined): void;
}

/** Checks an incoming request's signature against the calling passport's record. */
export interface CallerSignatures {
  check(
    request: Request,
    record: PassportRecordView,
    options: {
      windowSeconds: number;
      now: number;
      signal?: AbortSignal;
      /** Refuses a nonce seen before within its window, and a signature without one. */
      nonces?: NonceStore;
    },
  ): Promise<CallerSignatureCheck>;
  /**
   * The refusals that need no record: no signature, one that does not cover what it must, one
   * outside its window. `decideCall` asks this first, so a request that could never be accepted
   * does not make the verifier look up the passport it names. Undefined when nothing is refused
   * yet; `check` makes the same checks again.
   */
  screen?(request: Request, options: { windowSeconds: number; now: number }): CallerSignatureRefusal | undefined;
  /**
   * Verifies the signature before anything is looked up, when the key its keyid names is known
   * already: `verified` when it verifies and that key was proven for `identityId` before, a
   * refusal when it does not verify, `unknown` otherwise (the record decides; `check` then reuses
   * this verification rather than repeating it). A request that is not `verified` here spends
   * `decideCall`'s lookup budget.
   */
  verifyKnown?(
    request: Request,
    options: { identityId: string; windowSeconds: number; now: number },
  ): Promise<"verified" | "unknown" | CallerSignatureRefusal>;
}

export type CallerSignatureRefusal = Exclude<CallerSignatureCheck, { ok: true }>;

/**
 * The keys of the record's `signing_keys` bindings that count now: verified, fresh, each with the
 * binding (key directory) that proves it.
 */
export function provenKeys(record: PassportRecordView, now: number): { key: ProvenKey; directory: string }[] {
  const proven: { key: ProvenKey; directory: string }[] = [];
  for (const binding of record.bindings) {
    if (binding.class !== SIGNING_KEYS_CLASS || binding.verification?.state !== "verified") continue;
    const freshUntil = binding.verification.fresh_until ? Date.parse(binding.verification.fresh_until) : Number.NaN;
    if (!(freshUntil > now)) continue;
    for (const key of binding.keys ?? []) proven.push({ key, directory: binding.value });
  }
  return proven;
}
