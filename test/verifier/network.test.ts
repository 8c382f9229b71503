import { mintIdentityId } from "@passport/domain";
import { describe, expect, it } from "vitest";
import type { FetchLike } from "../../packages/verifier/src/index.ts";
import { Owner, RESOLVER, recording, resolverFetch, verifierFor } from "./support.ts";

/** Fails the first `times` requests the way a dropped connection does, then reaches the real resolver. */
function failing(times: number, failure: () => Promise<Response>): { fetch: FetchLike; count: () => number } {
  let calls = 0;
  return {
    count: () => calls,
    fetch: (input, init) => (++calls <= times ? failure() : resolverFetch(input, init)),
  };
}

const dropped = () => Promise.reject(new TypeError("fetch failed"));
const unavailable = () =>
  Promise.resolve(
    new Response(JSON.stringify({ type: "urn:svc:passport:problem:unavailable", status: 503, detail: "KV down" }), {
      status: 503,
      headers: { "content-type": "application/problem+json" },
    }),
  );

/** Never answers; gives up only when the request's signal aborts, as a hung connection does. */
const hanging: FetchLike = (_input, init) =>
  new Promise((_resolve, reject) => {
    init?.signal?.addEventListener("abort", () => reject(init.signal?.reason), { once: true });
  });

/** Answers at once with headers, then a body that never ends until the request's signal aborts it (as a real fetch's body does). */
const stalledBody: FetchLike = async (_input, init) => {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"identity_id":'));
      init?.signal?.addEventListener("abort", () => controller.error(init.signal?.reason), { once: true });
    },
  });
  return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
};

describe("network failure is not identity failure", () => {
  it("reports an unreachable resolver as network_failure after the bounded retries, relying on nothing", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const { fetch, count } = failing(Number.POSITIVE_INFINITY, dropped);
    const result = await verifierFor({ fetch, retries: 2 }).verify(id, { family: "api" });
    expect(result).toMatchObject({
      outcome: "network_failure",
      kind: "network",
      attempts: 3,
      next_step: "delay",
      relied_on: {},
      identity_is_not_authorization: true,
    });
    expect(result.reason).toMatch(/not proof that the identity is invalid/);
    expect(count()).toBe(3);
  });

  it("recovers when a retry reaches the resolver", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const result = await verifierFor({ fetch: failing(2, dropped).fetch, retries: 2 }).verify(id, { family: "api" });
    expect(result.outcome).toBe("ok");
    expect(result.source?.attempts).toBe(3);
  });

  it("times out a hung resolver per attempt and reports a timeout", async () => {
    const id = mintIdentityId();
    const result = await verifierFor({ fetch: hanging, timeoutMs: 20, retries: 1 }).verify(id);
    expect(result).toMatchObject({ outcome: "network_failure", kind: "timeout", attempts: 2 });
  });

  it("reports a body cut off by the attempt's deadline as a timeout, never throwing", async () => {
    const id = mintIdentityId();
    const result = await verifierFor({ fetch: stalledBody, timeoutMs: 20, retries: 0 }).verify(id);
    expect(result).toMatchObject({ outcome: "network_failure", kind: "timeout", attempts: 1, relied_on: {} });
  });

  it("reports trusted keys whose body is cut off by the deadline as a timeout, never throwing", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const fetch: FetchLike = (input, init) =>
      input === "https://keys.test/jwks.json" ? stalledBody(input, init) : resolverFetch(input, init);
    const result = await verifierFor({ fetch, jwks: "https://keys.test/jwks.json", timeoutMs: 20 }).verify(id);
    expect(result).toMatchObject({ outcome: "network_failure", kind: "timeout", url: "https://keys.test/jwks.json" });
  });

  it("reads trusted keys that cannot be had once per decision, not once per check", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const token = ((await (await resolverFetch(`${RESOLVER}/api/p/${id}/status`)).json()) as { token: string }).token;
    let reads = 0;
    const fetch: FetchLike = (input, init) => {
      if (input !== "https://keys.test/jwks.json") return resolverFetch(input, init);
      reads++;
      return Promise.resolve(new Response("unavailable", { status: 503 }));
    };
    const verifier = verifierFor({ fetch, jwks: "https://keys.test/jwks.json", retries: 0 });
    const result = await verifier.verify(id, { consequence: "higher", statusToken: token });
    expect(result).toMatchObject({ outcome: "network_failure", url: "https://keys.test/jwks.json" });
    expect(reads).toBe(1);
  });

  it("leaves no abort listener on the caller's signal after waiting between retries", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const controller = new AbortController();
    const listening = new Set<unknown>();
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((type: string, listener: EventListener, options?: boolean | { once?: boolean }) => {
      if (type === "abort") listening.add(listener);
      add(type, listener, options);
    }) as typeof signal.addEventListener;
    signal.removeEventListener = ((type: string, listener: EventListener, options?: boolean) => {
      if (type === "abort") listening.delete(listener);
      remove(type, listener, options);
    }) as typeof signal.removeEventListener;
    const { fetch } = failing(2, dropped);
    const result = await verifierFor({ fetch, retries: 2 }).verify(id, { family: "api", signal });
    expect(result.outcome).toBe("ok");
    expect(listening.size).toBe(0);
  });

  it("retries 5xx answers and reports them as server_error when they persist", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const persistent = failing(Number.POSITIVE_INFINITY, unavailable);
    const result = await verifierFor({ fetch: persistent.fetch, retries: 2 }).verify(id);
    expect(result).toMatchObject({
      outcome: "network_failure",
      kind: "server_error",
      status: 503,
      problem_type: "urn:svc:passport:problem:unavailable",
      attempts: 3,
    });
    const transient = await verifierFor({ fetch: failing(1, unavailable).fetch }).verify(id);
    expect(transient.outcome).toBe("ok");
  });

  it("never retries an answer about the identity: one request for a not-found id", async () => {
    const { fetch, calls } = recording();
    const id = mintIdentityId();
    const result = await verifierFor({ fetch, retries: 5 }).verify(id);
    expect(result.outcome).toBe("not_found");
    // The record once, then the status route once, which tells an issuance delay from an id never issued.
    expect(calls.map((c) => [c.url, c.status])).toEqual([
      [`${RESOLVER}/api/p/${id}.json`, 404],
      [`${RESOLVER}/api/p/${id}/status`, 404],
    ]);
  });

  it("does not mistake a wrong resolver address (route-not-found) for an unknown identity", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const result = await verifierFor({ resolver: `${RESOLVER}/wrong/prefix` }).verify(id);
    expect(result).toMatchObject({
      outcome: "network_failure",
      kind: "unexpected_response",
      status: 404,
      problem_type: "urn:svc:passport:problem:route-not-found",
    });
  });

  it("refuses a record for a different identity than the one asked for", async () => {
    const owner = await Owner.create();
    const asked = await owner.apiPassport();
    const other = await owner.apiPassport();
    const result = await verifierFor({
      fetch: (input, init) => resolverFetch(input.replace(asked.id, other.id), init),
    }).verify(asked.id);
    expect(result).toMatchObject({ outcome: "network_failure", kind: "unexpected_response", identity_id: asked.id });
    expect(result.relied_on).toEqual({});
  });

  it("stops when the caller cancels", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await verifierFor({ fetch: hanging }).verify(mintIdentityId(), { signal: controller.signal });
    expect(result).toMatchObject({ outcome: "network_failure", kind: "aborted" });
  });
});
