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
} from "web-bot-auth";
import { signerFromJWK, verifierFromJWK } from "web-bot-auth/crypto";
import {
  type CallerSignatureCheck,
  type CallerSignatureRefusal,
  type CallerSignatures,
  DEFAULT_SIGNATURE_WINDOW_SECONDS,
  type NonceStore,
  PASSPORT_AGENT_HEADER,
  provenKeys,
} from "../caller.ts";
import { type FetchLike, insecureAddress, platformFetch, readStrictJson } from "../http.ts";
import {
  CLOCK_SKEW_MS,
  type MessageSignature,
  outsideWindow,
  readSignature,
  signatureBase,
} from "./message-signature.ts";
import { readSignatureAgent, signatureAgentValue } from "./signature-agent.ts";

export type { NonceStore } from "../caller.ts";

/**
 * What every request signature covers: who is called, how, and which passport the caller names;
 * `@query` too when the request has a query.
 */
const SIGNED_COMPONENTS = ["@method", "@authority", "@path", "signature-agent", "passport-agent"] as const;
/**
 * The minimum a signature must cover to count (a Web Bot Auth signer adds `passport-agent`): a
 * signature without `@method` and `@path` would authorise any request to the API within its window,
 * and one without `@query` any query on the same path (so it is required when a query is present).
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
  /**
   * How `Signature-Agent` is written: `dictionary` (default), as draft-ietf-webbotauth-httpsig-protocol
   * writes it, or `legacy`, the bare string of the earlier drafts, for verifiers that read only that.
   */
  signatureAgentForm?: "dictionary" | "legacy";
}

/**
 * Signs requests as an agent: `Signature-Agent` names the key directory (a dictionary member,
 * `agent="…"`, unless `signatureAgentForm` asks for the legacy string), `Passport-Agent` the
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
    headers.set(
      "signature-agent",
      signatureAgentValue(this.#options.directory, this.#options.signatureAgentForm ?? "dictionary"),
    );
    headers.set(PASSPORT_AGENT_HEADER, this.#options.identityId);
    const created = new Date(Math.floor(now / 1000) * 1000);
    const validity = this.#options.validitySeconds ?? DEFAULT_SIGNATURE_WINDOW_SECONDS;
    const expires = new Date(created.getTime() + validity * 1000);
    const components: string[] = [...SIGNED_COMPONENTS];
    if (new URL(request.url).search) components.splice(components.indexOf("@path") + 1, 0, "@query");
    const signed = await signatureHeaders({ method: request.method, url: request.url, headers }, this.#signer, {
      created,
      expires,
      components,
    });
    headers.set("signature", signed.Signature);
    headers.set("signature-input", signed["Signature-Input"]);
    return new Request(request, { headers });
  }
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

function refusal(problem: CallerSignatureRefusal["problem"], detail: string): CallerSignatureRefusal {
  return { ok: false, problem, detail };
}

/**
 * The request's signature, when what its headers alone state could count: present, one this
 * reader accepts, Web Bot Auth's, covering what it must (`@query` when the request has a query),
 * a `Signature-Agent` (when sent) in either form it may take, within the window. The signature itself and its key are checked later.
 */
function screened(
  request: Request,
  { windowSeconds, now }: { windowSeconds: number; now: number },
): { signature: MessageSignature; url: URL } | CallerSignatureRefusal {
  const read = readSignature(request.headers);
  if (!read.ok) return refusal(read.problem, read.detail);
  const { signature } = read;
  const url = new URL(request.url);
  const required = url.search ? [...REQUIRED_COMPONENTS, "@query"] : REQUIRED_COMPONENTS;
  const missing = required.filter((component) => !signature.components.includes(component));
  if (missing.length > 0) return refusal("signature_invalid", `The signature does not cover ${missing.join(" and ")}.`);
  if (signature.tag !== HTTP_MESSAGE_SIGNATURE_TAG)
    return refusal("signature_invalid", "Not a Web Bot Auth signature.");
  const agent = request.headers.get("signature-agent");
  if (agent !== null) {
    const agents = readSignatureAgent(agent);
    if (!agents.ok) return refusal("signature_invalid", agents.detail);
  }
  const outside = outsideWindow(signature.created, signature.expires, now, windowSeconds);
  return outside ? refusal("signature_expired", outside) : { signature, url };
}

/**
 * The `CallerSignatures` of RFC 9421 / Web Bot Auth: verifies a request's Ed25519 (or RSA-PSS)
 * signature with the public key whose thumbprint is its keyid, read from the calling passport's
 * verified `signing_keys` directory, and only when that thumbprint is one the service proved.
 * A key once read stays imported (a thumbprint names one key), so the signature of a later
 * request by it is verified before its passport is looked up (`verifyKnown`).
 * @example
 * const verifier = new Verifier({ resolver, jwks, callerSignatures: webBotAuth() });
 */
export function webBotAuth(options: WebBotAuthOptions = {}): CallerSignatures {
  const fetcher = options.fetch ?? platformFetch;
  const ttl = (options.directoryTtlSeconds ?? 300) * 1000;
  const directories = new Map<string, Directory>();
  const reading = new Map<string, Promise<Directory>>();
  const misses = new Map<string, number>();
  /**
   * Imported public keys by thumbprint, each with the passports it was proven for at a check that
   * passed (a thumbprint names one key, so the key never goes stale; whether it is still proven
   * is the record's to say, at every check).
   */
  const keys = new Map<string, { verify: Verify<void>; passports: Set<string> }>();
  /** What `verifyKnown` found for a request, so `check` does not verify the same signature again. */
  const verifiedBefore = new WeakMap<Request, { keyid: string; ok: boolean }>();

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
    const listed = (read.value as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(listed)) throw new Error("the key directory holds no keys");
    const byThumbprint = new Map<string, JsonWebKey>();
    for (const key of listed.slice(0, 32)) {
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

  /** Whether `signature` verifies over the request at `url` with `verify`. */
  async function verifies(verify: Verify<void>, signature: MessageSignature, request: Request, url: URL) {
    const base = signatureBase(signature, { method: request.method, url, headers: request.headers });
    if (base === undefined) return false;
    try {
      await verify(base, signature.signature, {
        keyid: signature.keyid,
        tag: HTTP_MESSAGE_SIGNATURE_TAG,
        created: new Date(signature.created),
        expires: new Date(signature.expires),
      });
      return true;
    } catch {
      return false;
    }
  }

  return {
    screen(request, window) {
      const read = screened(request, window);
      return "ok" in read ? read : undefined;
    },

    async verifyKnown(request, { identityId, windowSeconds, now }) {
      const read = screened(request, { windowSeconds, now });
      if ("ok" in read) return read;
      const known = keys.get(read.signature.keyid);
      if (!known) return "unknown";
      const ok = await verifies(known.verify, read.signature, request, read.url);
      verifiedBefore.set(request, { keyid: read.signature.keyid, ok });
      if (!ok) return refusal("signature_invalid", "The signature does not verify with the key its keyid names.");
      return known.passports.has(identityId) ? "verified" : "unknown";
    },

    async check(request, record, { windowSeconds, now, signal, nonces }): Promise<CallerSignatureCheck> {
      const read = screened(request, { windowSeconds, now });
      if ("ok" in read) return read;
      const { signature, url } = read;
      const keyid = signature.keyid;
      const match = provenKeys(record, now).find((entry) => entry.key.thumbprint === keyid);
      if (!match) {
        return {
          ...refusal(
            "key_not_proven",
            "The signing key is not one the service proved for the calling passport (a verified, fresh signing_keys binding).",
          ),
          keyid,
        };
      }
      let known = keys.get(keyid);
      if (!known) {
        let verify: Verify<void>;
        try {
          verify = await verifierFromJWK(keyMaterial(await publicKey(match.directory, keyid, signal)));
        } catch (error) {
          return {
            ...refusal("key_unavailable", `The key directory could not be read: ${(error as Error).message}.`),
            keyid,
          };
        }
        if (keys.size >= 1000) keys.clear();
        known = { verify, passports: new Set() };
        keys.set(keyid, known);
      }
      const before = verifiedBefore.get(request);
      const ok = before?.keyid === keyid ? before.ok : await verifies(known.verify, signature, request, url);
      if (!ok) {
        return { ...refusal("signature_invalid", "The signature does not verify with the proven key."), keyid };
      }
      if (known.passports.size >= 100) known.passports.clear();
      known.passports.add(record.identity_id);
      const store = nonces ?? options.nonces;
      if (store) {
        if (!signature.nonce) return { ...refusal("signature_replayed", "The signature carries no nonce."), keyid };
        // Kept until the signature can no longer be accepted, its expiry plus the skew allowed.
        if (!(await store.firstSeen(signature.nonce, signature.expires + CLOCK_SKEW_MS))) {
          return {
            ...refusal("signature_replayed", "This signature's nonce was seen before within its window."),
            keyid,
          };
        }
      }
      return {
        ok: true,
        keyid,
        thumbprint: keyid,
        created: new Date(signature.created).toISOString(),
        expires: new Date(signature.expires).toISOString(),
        ...(signature.nonce ? { nonce: signature.nonce } : {}),
        directory: match.directory,
      };
    },
  };
}
