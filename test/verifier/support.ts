import { env } from "cloudflare:workers";
import { type FetchLike, Verifier, type VerifierOptions } from "../../packages/verifier/src/index.ts";
import { Caller, uniqueEndpoint } from "../support/api.ts";

export const RESOLVER = "http://resolver.test";

/** The real resolver Worker, reached through its service binding. */
export const resolverFetch: FetchLike = (input, init) => env.TEST_RESOLVER.fetch(input, init);

/** A verifier in front of the real resolver; no back-off so retry tests stay fast. */
export function verifierFor(options: Partial<VerifierOptions> = {}): Verifier {
  return new Verifier({ resolver: RESOLVER, fetch: resolverFetch, retryDelayMs: 1, ...options });
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
