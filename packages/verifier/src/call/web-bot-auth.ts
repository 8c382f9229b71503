// RFC 9421 HTTP Message Signatures in the Web Bot Auth profile, through Cloudflare's
// `web-bot-auth` (an optional peer dependency of the `./fetch` and `./provider` subpaths only;
// docs/reciprocal-trust.md says why). The agent signs with an Ed25519 key whose RFC 7638
// thumbprint is the keyid; the provider accepts the signature only when that thumbprint is one of
// the keys the service proved for the calling passport (a verified, fresh `signing_keys` binding).
import {
  HTTP_MESSAGE_SIGNATURE_TAG,
  helpers,
  jwkToKeyID,
  MediaType,
  type Signer,
  signatureHeaders,
  type Verify,
  verify as verifyMessage,
} from "web-bot-auth";
import { signerFromJWK, verifierFromJWK } from "web-bot-auth/crypto";
import {
  type CallerSignatureCheck,
  type CallerSignatureRefusal,
  type CallerSignatures,
  DEFAULT_SIGNATURE_WINDOW_SECONDS,
  PASSPORT_AGENT_HEADER,
  provenKeys,
} from "../caller.ts";
import { type FetchLike, insecureAddress, platformFetch, readStrictJson } from "../http.ts";

/** What every request signature must cover: who is called, how, and which passport the caller names. */
const SIGNED_COMPONENTS = ["@method", "@authority", "@path", "signature-agent", "passport-agent"] as const;
/**
 * The minimum a signature must cover to count (a Web Bot Auth signer adds `passport-agent`): a
 * signature without `@method` and `@path` would authorise any request to the API within its window.
 */
const REQUIRED_COMPONENTS = ["@method", "@authority", "@path", "passport-agent"];

/** The RFC 7638 SHA-256 thumbprint of a public JWK, base64url: the keyid a request is signed with. */
export function jwkThumbprint(jwk: JsonWebKey): Promise<string> {
  return jwkToKeyID(jwk, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE);
}

function publicPart(jwk: JsonWebKey): JsonWebKey {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, key_ops: _ops, ext: _ext, ...rest } = jwk;
  return rest;
}

/**
 * The key material alone, as Web Crypto imports it: a directory's or key file's `alg` ("ed25519",
 * "EdDSA"), `kid`, `use` or `key_ops` would otherwise make the import fail or narrow the key.
 */
function keyMaterial(jwk: JsonWebKey): JsonWebKey {
  const { alg: _alg, key_ops: _ops, use: _use, ext: _ext, ...rest } = jwk as JsonWebKey & { kid?: string };
  const { kid: _kid, ...material } = rest as JsonWebKey & { kid?: string };
  return material;
}

export interface AgentKey {
  /** The agent's private signing key as a JWK (Ed25519: `kty: "OKP"`, `crv: "Ed25519"`). */
  privateJwk: JsonWebKey;
  /** The URL of the key directory that holds its public half (the passport's `signing_keys` binding). */
  directory: string;
  /** The agent passport's identity id, sent as `Passport-Agent` and covered by the signature. */
  identityId: string;
  /** Lifetime of each signature (`expires - created`), in seconds; default 60, the providers' default window. */
  validitySeconds?: number;
}

/**
 * Signs requests as an agent: `Signature-Agent` names the key directory, `Passport-Agent` the
 * passport, and `Signature-Input` covers both with `@method`, `@authority` and `@path`, with
 * `created`, `expires`, a fresh 64-byte nonce, `keyid` (the key's thumbprint) and the Web Bot Auth
 * tag.
 * @example
 * const signer = await RequestSigner.create({ privateJwk, directory: "https://agent.example/.well-known/http-message-signatures-directory", identityId });
 * const response = await fetch(await signer.sign(new Request("https://api.example/v1/orders")));
 */
export class RequestSigner {
  readonly keyid: string;
  readonly #signer: Signer;
  readonly #options: AgentKey;

  private constructor(signer: Signer, keyid: string, options: AgentKey) {
    this.#signer = signer;
    this.keyid = keyid;
    this.#options = options;
  }

  static async create(options: AgentKey): Promise<RequestSigner> {
    if (!options.privateJwk.d) throw new TypeError("privateJwk: not a private key");
    const unsafe = insecureAddress(options.directory);
    if (unsafe) throw new TypeError(`directory: "${options.directory}" ${unsafe}`);
    const keyid = await jwkThumbprint(publicPart(options.privateJwk));
    const signer = await signerFromJWK(keyMaterial(options.privateJwk));
    signer.keyid = keyid;
    return new RequestSigner(signer, keyid, options);
  }

  /** A copy of the request with the signature headers (the body is passed through unread). */
  async sign(request: Request, now: number = Date.now()): Promise<Request> {
    const headers = new Headers(request.headers);
    headers.set("signature-agent", JSON.stringify(this.#options.directory));
    headers.set(PASSPORT_AGENT_HEADER, this.#options.identityId);
    const created = new Date(Math.floor(now / 1000) * 1000);
    const validity = this.#options.validitySeconds ?? DEFAULT_SIGNATURE_WINDOW_SECONDS;
    const expires = new Date(created.getTime() + validity * 1000);
    const signed = await signatureHeaders({ method: request.method, url: request.url, headers }, this.#signer, {
      created,
      expires,
      components: [...SIGNED_COMPONENTS],
    });
    headers.set("signature", signed.Signature);
    headers.set("signature-input", signed["Signature-Input"]);
    return new Request(request, { headers });
  }
}

/** Whether a nonce is new; a store remembers each one until its signature's window has passed. */
export interface NonceStore {
  /** True the first time `nonce` is offered before `until` (ms since the epoch), false after. */
  firstSeen(nonce: string, until: number): boolean | Promise<boolean>;
}

/**
 * A nonce store in this isolate's memory: refuses a nonce offered twice within its window. It
 * sees only the requests of one isolate (a Worker has many); share a store (a Durable Object) for
 * replay refusal across them. Bounded: the oldest entries go first past `maxEntries`.
 */
export class MemoryNonceStore implements NonceStore {
  readonly #seen = new Map<string, number>();
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: { maxEntries?: number; now?: () => number } = {}) {
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  firstSeen(nonce: string, until: number): boolean {
    const now = this.#now();
    const known = this.#seen.get(nonce);
    if (known !== undefined && known > now) return false;
    this.#seen.set(nonce, until);
    if (this.#seen.size > this.#maxEntries) {
      for (const [key, expiry] of this.#seen) {
        if (this.#seen.size <= this.#maxEntries && expiry > now) break;
        this.#seen.delete(key);
      }
    }
    return true;
  }
}

export interface WebBotAuthOptions {
  /** Fetches key directories; default the platform's `fetch` (in a Worker, an egress binding works too). */
  fetch?: FetchLike;
  /** How long a key directory read is kept; default 300 s. An unknown proven key re-reads it (at most every 10 s). */
  directoryTtlSeconds?: number;
  /** Per directory request; default 3000. */
  timeoutMs?: number;
  /** Refuses a nonce seen before within its window (`signature_replayed`); default none (see docs). */
  nonces?: NonceStore;
}

interface Directory {
  keys: Map<string, JsonWebKey>;
  readAt: number;
}

const DIRECTORY_ACCEPT = `${MediaType.HTTP_MESSAGE_SIGNATURES_DIRECTORY}, application/jwk-set+json, application/json`;
const MAX_DIRECTORY_BYTES = 64 * 1024;

class Refusal extends Error {
  readonly problem: Exclude<CallerSignatureCheck, { ok: true }>["problem"];
  constructor(problem: Refusal["problem"], detail: string) {
    super(detail);
    this.problem = problem;
  }
}

/**
 * What can be refused from the signature headers alone (`CallerSignatures.screen`): no signature,
 * one that does not cover the required components, one whose `created` and `expires` parameters
 * put it outside the window. The signature itself and its key are `check`'s, with the record.
 */
function screen(request: Request, { windowSeconds, now }: { windowSeconds: number; now: number }) {
  const input = request.headers.get("signature-input");
  if (!input || !request.headers.get("signature")) {
    return refusal("signature_missing", "The request carries no HTTP message signature.");
  }
  const covered = coveredComponents(input);
  const missing = REQUIRED_COMPONENTS.filter((component) => !covered.includes(component));
  if (missing.length > 0) return refusal("signature_invalid", `The signature does not cover ${missing.join(" and ")}.`);
  // Seconds since the epoch, as RFC 9421 writes them, read from the first signature's parameters
  // (after its component list, quoted values blanked so a keyid cannot carry one); a header
  // without them is left to `check`, which reads the same parameters through the library.
  const params = (
    input
      .slice(input.indexOf(")") + 1)
      .replace(/"[^"]*"/g, '""')
      .split(",")[0] ?? ""
  ).trim();
  const created = Number(/;\s*created=(\d{1,12})(?![\d])/.exec(params)?.[1]) * 1000;
  const expires = Number(/;\s*expires=(\d{1,12})(?![\d])/.exec(params)?.[1]) * 1000;
  const outside = outsideWindow(created, expires, now, windowSeconds);
  return outside ? refusal("signature_expired", outside) : undefined;
}

/**
 * Why a signature made at `created` and expiring at `expires` (ms) is not within the window at
 * `now`, or undefined when it is (a time that is NaN, unknown, passes its comparisons). One rule
 * for the screen's own reading of the parameters and for `check`'s through the library.
 */
function outsideWindow(created: number, expires: number, now: number, windowSeconds: number): string | undefined {
  if (created > now + 5_000) return "The signature was created in the future.";
  if (now - created > windowSeconds * 1000 || expires - created > windowSeconds * 1000) {
    return `The signature is older than, or valid for longer than, the ${windowSeconds} s window.`;
  }
  if (expires < now) return "The signature has expired.";
  return undefined;
}

function refusal(problem: CallerSignatureRefusal["problem"], detail: string): CallerSignatureRefusal {
  return { ok: false, problem, detail };
}

/** The components a `Signature-Input` covers, read from its first (or only) member. */
function coveredComponents(input: string): string[] {
  const list = /^[^=]+=\(([^)]*)\)/.exec(input.trim())?.[1] ?? "";
  return [...list.matchAll(/"([^"]+)"/g)].map((match) => (match[1] ?? "").toLowerCase());
}

/**
 * The `CallerSignatures` of RFC 9421 / Web Bot Auth: verifies a request's Ed25519 (or RSA-PSS)
 * signature with the public key whose thumbprint is its keyid, read from the calling passport's
 * verified `signing_keys` directory, and only when that thumbprint is one the service proved.
 * @example
 * const verifier = new Verifier({ resolver, jwks, callerSignatures: webBotAuth() });
 */
export function webBotAuth(options: WebBotAuthOptions = {}): CallerSignatures {
  const fetcher = options.fetch ?? platformFetch;
  const ttl = (options.directoryTtlSeconds ?? 300) * 1000;
  const directories = new Map<string, Directory>();
  const reading = new Map<string, Promise<Directory>>();
  const misses = new Map<string, number>();
  /** Imported public keys by thumbprint (a thumbprint names one key, so this never goes stale). */
  const verifiers = new Map<string, Verify<void>>();

  async function read(url: string, signal?: AbortSignal): Promise<Directory> {
    const signals = [AbortSignal.timeout(options.timeoutMs ?? 3000), ...(signal ? [signal] : [])];
    const response = await fetcher(url, {
      headers: { accept: DIRECTORY_ACCEPT },
      redirect: "manual",
      signal: AbortSignal.any(signals),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`the key directory answered ${response.status}`);
    }
    const read = await readStrictJson(response, MAX_DIRECTORY_BYTES);
    if (!read.ok) throw new Error(`the key directory is not usable: ${read.problem}`);
    const keys = (read.value as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw new Error("the key directory holds no keys");
    const byThumbprint = new Map<string, JsonWebKey>();
    for (const key of keys.slice(0, 32)) {
      if (key && typeof key === "object" && !("d" in key)) {
        byThumbprint.set(await jwkThumbprint(key as JsonWebKey), key as JsonWebKey);
      }
    }
    return { keys: byThumbprint, readAt: Date.now() };
  }

  async function publicKey(url: string, thumbprint: string, signal?: AbortSignal): Promise<JsonWebKey> {
    const held = directories.get(url);
    const known = held && Date.now() - held.readAt < ttl ? held.keys.get(thumbprint) : undefined;
    if (known) return known;
    // A proven key the held copy lacks: the agent rotated, so read again; a key the directory
    // lacked at a read less than 10 s ago is not asked for again (a flood of such requests costs one read).
    const missed = misses.get(`${url} ${thumbprint}`);
    if (missed !== undefined && Date.now() - missed < 10_000)
      throw new Error("the key directory does not hold this key");
    let pending = reading.get(url);
    if (!pending) {
      pending = read(url, signal).finally(() => reading.delete(url));
      reading.set(url, pending);
    }
    const fresh = await pending;
    directories.set(url, fresh);
    const key = fresh.keys.get(thumbprint);
    if (!key) {
      if (misses.size >= 1000) misses.clear();
      misses.set(`${url} ${thumbprint}`, fresh.readAt);
      throw new Error("the key directory does not hold this key");
    }
    return key;
  }

  return {
    screen,
    async check(request, record, { windowSeconds, now, signal }): Promise<CallerSignatureCheck> {
      const refused = screen(request, { windowSeconds, now });
      if (refused) return refused;
      const proven = provenKeys(record, now);
      let keyid: string | undefined;
      try {
        return await verifyMessage(request, async (data, signature, params) => {
          keyid = params.keyid;
          if (params.tag !== HTTP_MESSAGE_SIGNATURE_TAG)
            throw new Refusal("signature_invalid", "Not a Web Bot Auth signature.");
          const created = params.created.getTime();
          const expires = params.expires.getTime();
          const outside = Number.isNaN(created)
            ? "The signature was created in the future."
            : outsideWindow(created, expires, now, windowSeconds);
          if (outside) throw new Refusal("signature_expired", outside);
          const match = proven.find((entry) => entry.key.thumbprint === params.keyid);
          if (!match) {
            throw new Refusal(
              "key_not_proven",
              "The signing key is not one the service proved for the calling passport (a verified, fresh signing_keys binding).",
            );
          }
          let jwk: JsonWebKey;
          try {
            jwk = await publicKey(match.directory, match.key.thumbprint, signal);
          } catch (error) {
            throw new Refusal("key_unavailable", `The key directory could not be read: ${(error as Error).message}.`);
          }
          try {
            let check = verifiers.get(match.key.thumbprint);
            if (!check) {
              check = await verifierFromJWK(keyMaterial(jwk));
              if (verifiers.size >= 1000) verifiers.clear();
              verifiers.set(match.key.thumbprint, check);
            }
            await check(data, signature, params);
          } catch {
            throw new Refusal("signature_invalid", "The signature does not verify with the proven key.");
          }
          if (options.nonces) {
            if (!params.nonce) throw new Refusal("signature_replayed", "The signature carries no nonce.");
            if (!(await options.nonces.firstSeen(params.nonce, expires))) {
              throw new Refusal("signature_replayed", "This signature's nonce was seen before within its window.");
            }
          }
          return {
            ok: true,
            keyid: params.keyid,
            thumbprint: match.key.thumbprint,
            created: new Date(created).toISOString(),
            expires: new Date(expires).toISOString(),
            ...(params.nonce ? { nonce: params.nonce } : {}),
            directory: match.directory,
          };
        });
      } catch (error) {
        if (error instanceof Refusal) {
          return { ok: false, problem: error.problem, detail: error.message, ...(keyid ? { keyid } : {}) };
        }
        // The library's own refusals: an unparsable header, a wrong tag, created in the future or expired.
        const message = (error as Error).message ?? "";
        const expired = /expired|future/i.test(message);
        return {
          ok: false,
          problem: expired ? "signature_expired" : "signature_invalid",
          detail: expired ? "The signature is outside its validity window." : "The signature headers do not parse.",
          ...(keyid ? { keyid } : {}),
        };
      }
    },
  };
}
