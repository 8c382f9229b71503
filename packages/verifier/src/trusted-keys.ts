/**
 * The public keys a verifier trusts to sign records: a pinned JWK Set, one read from a URL the
 * caller chose (re-read when its `Cache-Control: max-age` runs out), or none at all
 * (`signature: "skip-insecure"`). Never taken from the answer being verified.
 */
import {
  cacheDirectives,
  fetchWithRetry,
  type HttpPolicy,
  insecureAddress,
  readFailureKind,
  readStrictJson,
} from "./http.ts";
import { type JwkSet, KeyRing } from "./keys.ts";
import type { NetworkFailure, NetworkFailureKind } from "./outcome.ts";
import { networkFailure } from "./resolution.ts";

const DEFAULT_JWKS_MAX_AGE_SECONDS = 300;

/** The trusted keys, none (`skip-insecure`), or why they could not be read. */
export type KeysAnswer = KeyRing | undefined | NetworkFailure;

type Source =
  | { kind: "skipped" }
  | { kind: "pinned"; ring: KeyRing }
  | { kind: "url"; url: string; ring?: KeyRing; expiresAt: number };

export class TrustedKeys {
  readonly #source: Source;
  readonly #http: HttpPolicy;
  readonly #now: () => number;

  /** Validates the verifier's `jwks` and `signature` options: a contradiction or an omission is a `TypeError`. */
  constructor(
    options: { jwks?: JwkSet | string; signature?: "required" | "skip-insecure" },
    http: HttpPolicy,
    now: () => number,
  ) {
    this.#http = http;
    this.#now = now;
    const { jwks, signature = "required" } = options;
    if (signature !== "required" && signature !== "skip-insecure") {
      throw new TypeError(`signature: "${signature}" is not "required" or "skip-insecure"`);
    }
    if (signature === "skip-insecure") {
      if (jwks !== undefined)
        throw new TypeError('signature: "skip-insecure" and jwks contradict each other; pick one');
      this.#source = { kind: "skipped" };
    } else if (typeof jwks === "string") {
      const unsafeKeys = insecureAddress(jwks);
      if (unsafeKeys) throw new TypeError(`jwks: "${jwks}" ${unsafeKeys}`);
      this.#source = { kind: "url", url: jwks, expiresAt: 0 };
    } else if (jwks !== undefined) {
      this.#source = { kind: "pinned", ring: new KeyRing(jwks) };
    } else {
      throw new TypeError(
        'jwks is required: the public keys you trust to sign records (a JWK Set, or an https URL you choose); to check without them, say signature: "skip-insecure"',
      );
    }
  }

  /** The keys for one call: looked up at most once, however many checks need them. */
  once(identityId: string, signal?: AbortSignal): () => Promise<KeysAnswer> {
    let keys: Promise<KeysAnswer> | undefined;
    return () => {
      keys ??= this.#lookUp(identityId, signal);
      return keys;
    };
  }

  /** The trusted key ring: pinned, or read from the caller's URL when its copy has expired. */
  async #lookUp(identityId: string, signal?: AbortSignal): Promise<KeysAnswer> {
    const keys = this.#source;
    if (keys.kind === "skipped") return undefined;
    if (keys.kind === "pinned") return keys.ring;
    const now = this.#now();
    if (keys.ring && now < keys.expiresAt) return keys.ring;
    const answer = await fetchWithRetry(keys.url, { headers: { accept: "application/json" } }, this.#http, signal);
    const failed = (detail: string, status?: number, kind: NetworkFailureKind = "unexpected_response") =>
      networkFailure(identityId, keys.url, {
        kind,
        attempts: answer.attempts,
        ...(status ? { status } : {}),
        detail: `the trusted keys at ${keys.url} could not be read: ${detail}`,
      });
    if (!answer.ok) {
      const { ok: _, problemType, ...failure } = answer;
      return networkFailure(identityId, keys.url, {
        ...failure,
        detail: `the trusted keys at ${keys.url} could not be read: ${failure.detail}`,
      });
    }
    if (answer.response.status !== 200) {
      await answer.response.body?.cancel();
      return failed(`HTTP ${answer.response.status}`, answer.response.status);
    }
    const read = await readStrictJson(answer.response, this.#http.maxBytes);
    if (!read.ok) return failed(read.problem, 200, readFailureKind(read));
    try {
      keys.ring = new KeyRing(read.value);
    } catch (error) {
      return failed(error instanceof Error ? error.message : "not a JWK Set", 200);
    }
    const maxAge = cacheDirectives(answer.response.headers.get("cache-control")).maxAge;
    keys.expiresAt = now + (maxAge ?? DEFAULT_JWKS_MAX_AGE_SECONDS) * 1000;
    return keys.ring;
  }
}
