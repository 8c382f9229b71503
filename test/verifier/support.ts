import { env } from "cloudflare:workers";
import { mintIdentityId } from "@passport/domain";
import {
  base64urlEncode,
  canonicalDigest,
  canonicalJson,
  type FetchLike,
  type JwkSet,
  Verifier,
  type VerifierOptions,
} from "../../packages/verifier/src/index.ts";
import { Caller, uniqueEndpoint } from "../support/api.ts";

export const RESOLVER = "https://resolver.test";

/** The key set a consumer pinned: the control plane's current public key, obtained out of band. */
export const pinnedKeys = (): JwkSet => JSON.parse(env.TEST_SIGNING_JWKS);

/** The real resolver Worker, reached through its service binding. */
export const resolverFetch: FetchLike = (input, init) => env.TEST_RESOLVER.fetch(input, init);

/** A verifier in front of the real resolver, trusting its signing key; no back-off so retry tests stay fast. */
export function verifierFor(options: Partial<VerifierOptions> = {}): Verifier {
  const keys = options.signature === "skip-insecure" ? {} : { jwks: pinnedKeys() };
  return new Verifier({ resolver: RESOLVER, fetch: resolverFetch, retryDelayMs: 1, ...keys, ...options });
}

export interface Recorded {
  url: string;
  headers: Headers;
  status?: number;
}

/** Passes every request to `inner` and records what was asked and answered. */
export function recording(inner: FetchLike = resolverFetch): { fetch: FetchLike; calls: Recorded[] } {
  const calls: Recorded[] = [];
  return {
    calls,
    fetch: async (input, init) => {
      const call: Recorded = { url: input, headers: new Headers(init?.headers) };
      calls.push(call);
      const response = await inner(input, init);
      call.status = response.status;
      return response;
    },
  };
}

/** An owner of a fresh organisation, with helpers for the Dashboard API calls the tests need. */
export class Owner {
  private constructor(readonly caller: Caller) {}

  static async create(): Promise<Owner> {
    return new Owner(await Caller.create("owner"));
  }

  get organisation(): string {
    return this.caller.organisation;
  }

  /** Creates an API passport (unique endpoint unless given) and returns its id and endpoint. */
  async apiPassport(body: Record<string, unknown> = {}): Promise<{ id: string; endpoint: string }> {
    const endpoint = uniqueEndpoint();
    const created = await this.caller.createPassport({
      display_name: "Verifier test API",
      environment: "production",
      version: "2026-10",
      bindings: [{ class: "endpoint", value: endpoint }],
      ...body,
    });
    return { id: created.identity_id, endpoint };
  }

  state(id: string, body: Record<string, unknown>): Promise<unknown> {
    return this.caller.json("PATCH", `/v1/passports/${id}/state`, body);
  }

  evidence(id: string, body: { claim: string; observed_at: string; fresh_until?: string }): Promise<unknown> {
    return this.caller.json(
      "POST",
      `/v1/passports/${id}/evidence`,
      { source: "verifier test", scope: "the test organisation only", ...body },
      200,
    );
  }
}

export function daysAgo(days: number, from = Date.now()): string {
  return new Date(from - days * 86_400_000).toISOString();
}

/**
 * Records in the shape of the proven-bindings contract (docs/record-format.md), signed with a key
 * of the test's own and served at {@link CONTRACT_RESOLVER} by {@link RecordServer.fetch}, so
 * every binding state and evidence basis can be exercised before the service publishes them all.
 */
export const CONTRACT_RESOLVER = "https://records.test";
export const NOW = Date.now();
const at = (offsetDays: number) => new Date(NOW + offsetDays * 86_400_000).toISOString();

export type ContractRecord = Record<string, unknown> & {
  identity_id: string;
  bindings: Record<string, unknown>[];
  evidence: Record<string, unknown>[];
};

/** An active production API passport whose endpoint the service verified by its well-known document. */
export function contractRecord(overrides: Partial<ContractRecord> = {}): ContractRecord {
  return {
    record_format: "svc.passport_record",
    format_version: "2026-10",
    identity_id: mintIdentityId(),
    family: "api",
    display_name: "Contract test API",
    organisation: { id: "org_contract", name: "Contract Ltd", relationship: "responsible" },
    bindings: [
      {
        class: "endpoint",
        value: "https://api.contract.example/v1",
        bound_at: at(-30),
        verification: verified("evd_endpoint"),
      },
    ],
    state: { lifecycle: "active", environment: "production", version: "2026-10", as_of: at(-30) },
    evidence: [observed("evd_endpoint", "agent.endpoint_control", "https://api.contract.example")],
    record_version: 1,
    published_at: at(-1),
    ...overrides,
  };
}

/** A `verified` binding state, checked a day ago, fresh for `freshDays` more. */
export function verified(evidence: string, freshDays = 6): Record<string, unknown> {
  return { state: "verified", method: "http_well_known", verified_at: at(-1), fresh_until: at(freshDays), evidence };
}

/** Evidence the service's own check produced. */
export function observed(id: string, claim: string, scope: string, freshDays = 6): Record<string, unknown> {
  return {
    id,
    claim,
    basis: "observed",
    source: "passport-service",
    scope,
    observed_at: at(-1),
    fresh_until: at(freshDays),
  };
}

/** Evidence a member wrote, with the source they typed. */
/** Members of asserted evidence a trusted source attested (docs/evidence-attestation.md). */
export const ATTESTED = { trusted_source: true, attested_by: { source: "self-declared", key_id: "auditor-1" } };

export function asserted(id: string, claim: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    claim,
    basis: "asserted",
    source: "self-declared",
    scope: "the whole organisation",
    observed_at: at(-1),
    ...extra,
  };
}

export class RecordServer {
  readonly #served = new Map<string, { text: string; signature?: string }>();
  private constructor(
    readonly jwks: JwkSet,
    readonly sign: (record: unknown) => Promise<string>,
    /** A status token (compact JWS, typ passport-status+jwt) over `claims`, signed with the record key. */
    readonly signStatus: (claims: Record<string, unknown>) => Promise<string>,
  ) {}

  static async create(kid = "contract-test-key"): Promise<RecordServer> {
    const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const { x, y } = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
    const header = base64urlEncode(
      new TextEncoder().encode(JSON.stringify({ alg: "ES256", kid, typ: "passport+jws" })),
    );
    const sign = async (record: unknown) => {
      const payload = base64urlEncode(new TextEncoder().encode(canonicalJson(record)));
      const signature = await crypto.subtle.sign(
        { name: "ECDSA", hash: "SHA-256" },
        pair.privateKey,
        new TextEncoder().encode(`${header}.${payload}`),
      );
      return `${header}..${base64urlEncode(signature)}`;
    };
    const signStatus = async (claims: Record<string, unknown>) => {
      const encode = (value: unknown) => base64urlEncode(new TextEncoder().encode(JSON.stringify(value)));
      const input = `${encode({ alg: "ES256", kid, typ: "passport-status+jwt" })}.${encode(claims)}`;
      const signature = await crypto.subtle.sign(
        { name: "ECDSA", hash: "SHA-256" },
        pair.privateKey,
        new TextEncoder().encode(input),
      );
      return `${input}.${base64urlEncode(signature)}`;
    };
    return new RecordServer({ keys: [{ kty: "EC", crv: "P-256", x, y, kid }] }, sign, signStatus);
  }

  /** Seals (digest) and signs `record`, and serves it; returns the record as served. */
  async publish(record: ContractRecord): Promise<ContractRecord & { digest: string }> {
    const { digest: _, ...content } = record;
    const sealed = { ...content, digest: await canonicalDigest(content) } as ContractRecord & { digest: string };
    this.#served.set(record.identity_id, { text: JSON.stringify(sealed), signature: await this.sign(sealed) });
    return sealed;
  }

  /** Serves `text` as the record of `id`, with the signature given (for answers no publisher would make). */
  serveRaw(id: string, text: string, signature?: string): void {
    this.#served.set(id, { text, ...(signature ? { signature } : {}) });
  }

  readonly fetch: FetchLike = async (input) => {
    const url = new URL(input);
    const id = /^\/api\/p\/([^/]+)\.json$/.exec(url.pathname)?.[1];
    const served = id ? this.#served.get(decodeURIComponent(id)) : undefined;
    if (url.origin !== CONTRACT_RESOLVER || !served) {
      return Response.json(
        { type: "urn:svc:passport:problem:identity-not-found", title: "Not found", status: 404 },
        { status: 404, headers: { "content-type": "application/problem+json" } },
      );
    }
    return new Response(served.text, {
      headers: {
        "content-type": "application/json",
        "cache-control": "no-cache",
        ...(served.signature ? { "passport-signature": served.signature } : {}),
      },
    });
  };

  /** A verifier that trusts this server's key and reads its clock at {@link NOW}. */
  verifier(options: Partial<VerifierOptions> = {}): Verifier {
    return new Verifier({
      resolver: CONTRACT_RESOLVER,
      fetch: this.fetch,
      jwks: this.jwks,
      now: () => NOW,
      retryDelayMs: 1,
      ...options,
    });
  }
}
