// A realistic ~1 KB published record for the benchmarks: three bindings, one piece of evidence.
import { mintIdentityId, projectPublicRecord, sealRecord } from "@passport/domain";

const AT = "2026-10-20T09:00:00.000Z";

/** The `n`th sample record, sealed with its digest; `previousDigest` links it to an earlier version. */
export function sampleRecord(n, previousDigest) {
  return sealRecord(
    projectPublicRecord(
      {
        passport: {
          id: mintIdentityId(),
          family: "api",
          displayName: `Payments API ${n}`,
          relationship: "responsible",
          lifecycle: "active",
          availability: "available",
          environment: "production",
          version: "2026.10.1",
          stateAsOf: AT,
          recheckRequired: false,
          duplicateOf: null,
          recordVersion: 3,
        },
        organisation: { id: "org_bench", name: "Bench Organisation Ltd" },
        parent: null,
        bindings: [
          { class: "endpoint", value: `https://api.example.com/payments/${n}`, label: "Public base URL", boundAt: AT },
          { class: "openapi", value: `https://api.example.com/payments/${n}/openapi.json`, label: null, boundAt: AT },
          {
            class: "gateway",
            value: `arn:aws:apigateway:eu-west-1::/restapis/a1b2c3d4e5/${n}`,
            label: null,
            boundAt: AT,
          },
        ],
        evidence: [
          {
            id: `ev_${n}`,
            claim: "organisation.domain_control",
            source: "DNS TXT record check",
            scope: "api.example.com",
            reference: "https://api.example.com/.well-known/passport",
            observedAt: AT,
            freshUntil: "2027-01-20T09:00:00.000Z",
            withdrawnAt: null,
          },
        ],
        authority: [],
      },
      AT,
      previousDigest,
    ),
  );
}
