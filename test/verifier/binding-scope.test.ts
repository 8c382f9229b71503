// Spec 2.2 rule 1 (and 2.3 rule 2): an OpenAPI binding supports interface-description context only;
// verified, it proves the description is the claimant's and nothing about runtime behaviour. A
// consumer that requires a claim about behaviour gets it as not established, however verified the
// description is.

import { describe, expect, it } from "vitest";
import { contractRecord, observed, RecordServer, verified } from "./support.ts";

const OPENAPI = "https://api.contract.example/openapi.json";

function withVerifiedOpenapi() {
  const record = contractRecord();
  return contractRecord({
    bindings: [
      ...record.bindings,
      {
        class: "openapi",
        value: OPENAPI,
        bound_at: new Date().toISOString(),
        verification: { ...verified("evd_openapi"), method: "document_names_id" },
      },
    ],
    evidence: [...record.evidence, observed("evd_openapi", "api.openapi_control", OPENAPI)],
  });
}

describe("spec 2.2 rule 1: a verified OpenAPI binding establishes nothing about runtime behaviour", () => {
  it("satisfies a required openapi binding, and leaves a required claim about behaviour not established", async () => {
    const server = await RecordServer.create();
    const { identity_id: id } = await server.publish(withVerifiedOpenapi());
    const verifier = server.verifier();

    const described = await verifier.verify(id, { family: "api", bindings: [{ class: "openapi", value: OPENAPI }] });
    expect(described.ok).toBe(true);

    for (const claim of ["api.runtime_behaviour", "api.matches_openapi", "api.security_review"]) {
      const behaviour = await verifier.verify(id, {
        family: "api",
        bindings: [{ class: "openapi", value: OPENAPI }],
        evidence: [claim],
      });
      expect(behaviour, claim).toMatchObject({ ok: false, outcome: "missing_evidence", missing_claims: [claim] });
    }
  });
});
