// Spec 5.4 and 7 ("API authentication failure: handled in the API's auth layer; not evidence
// against the passport"). The passport check and the API's own authentication are separate steps
// (4.6 steps 2-5, then 6): a 401 from the API reaches the caller as the API's answer, and the
// verdict on the API's passport stays what it was.

import { describe, expect, it } from "vitest";
import { passportFetch } from "../../packages/verifier/src/fetch.ts";
import { contractRecord, RecordServer } from "./support.ts";

const API_URL = "https://api.contract.example/v1/orders";
const UNAUTHENTICATED = {
  type: "https://api.contract.example/problems/unauthenticated",
  title: "Unauthenticated",
  status: 401,
};

describe("spec 5.4 and 7: an API authentication failure is not evidence against the passport", () => {
  it("a 401 from the API through passportFetch reaches the caller and leaves the passport's verdict unchanged", async () => {
    const server = await RecordServer.create();
    const api = await server.publish(contractRecord());
    const verifier = server.verifier();
    const expectation = { consequence: "lower" as const, family: "api" as const, baseUrl: API_URL };
    const before = await verifier.verify(api.identity_id, expectation);
    expect(before.ok).toBe(true);

    let sent = 0;
    const call = passportFetch({
      verifier,
      apis: { "https://api.contract.example": api.identity_id },
      fetch: async () => {
        sent++;
        return Response.json(UNAUTHENTICATED, {
          status: 401,
          headers: { "content-type": "application/problem+json", "www-authenticate": 'Bearer realm="orders"' },
        });
      },
    });
    // The API's refusal is its answer, not a PassportCheckError: the passport check passed.
    const first = await call(API_URL, { method: "POST", headers: { authorization: "Bearer expired" } });
    expect(first.status).toBe(401);
    expect(first.headers.get("www-authenticate")).toContain("Bearer");
    expect(sent).toBe(1);

    const after = await verifier.verify(api.identity_id, expectation);
    expect(after.ok).toBe(true);
    expect(after.outcome).toBe(before.outcome);
    expect(after.next_step).toBe(before.next_step);
    expect(after.relied_on).toEqual(before.relied_on);

    // The next call is checked again and sent again: nothing remembered the 401 against the passport.
    const second = await call(API_URL, { method: "POST", headers: { authorization: "Bearer renewed" } });
    expect(second.status).toBe(401);
    expect(sent).toBe(2);
  });
});
