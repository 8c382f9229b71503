import { env } from "cloudflare:workers";
import {
  BINDING_CLASSES_BY_FAMILY,
  LIFECYCLE_STATUSES,
  mintIdentityId,
  type PassportAggregate,
  PassportRecord,
  projectPublicRecord,
  type SnapshotMetadata,
  sealRecord,
  snapshotKey,
} from "@passport/domain";
import fc from "fast-check";

type Passport = PassportAggregate["passport"];

/** A plausible aggregate; `overrides.passport` is merged into the passport row. */
export function aggregate(
  overrides: Partial<Omit<PassportAggregate, "passport">> & { passport?: Partial<Passport> } = {},
): PassportAggregate {
  const at = "2026-10-20T09:00:00.000Z";
  return {
    organisation: { id: "org_resolver_test", name: "Resolver Test Ltd" },
    parent: null,
    bindings: [{ class: "endpoint", value: "https://api.example.com/v1", label: "Public base URL", boundAt: at }],
    evidence: [
      {
        id: "ev_1",
        claim: "organisation.domain_control",
        source: "DNS TXT record check",
        scope: "api.example.com",
        reference: "https://api.example.com/.well-known/passport",
        observedAt: at,
        freshUntil: "2027-01-20T09:00:00.000Z",
        withdrawnAt: null,
      },
    ],
    authority: [],
    ...overrides,
    passport: {
      id: mintIdentityId(),
      family: "api",
      displayName: "Payments API",
      relationship: "responsible",
      lifecycle: "active",
      availability: "available",
      environment: "production",
      version: "2026.10.1",
      stateAsOf: at,
      recheckRequired: false,
      duplicateOf: null,
      recordVersion: 1,
      ...overrides.passport,
    },
  };
}

/**
 * Publishes a record the way the control plane does: project, seal, validate against the zod
 * schema, then write the snapshot and its metadata to KV. Returns the record as published.
 */
export async function publish(source: PassportAggregate): Promise<PassportRecord> {
  const record = PassportRecord.parse(await sealRecord(projectPublicRecord(source, new Date().toISOString())));
  const metadata: SnapshotMetadata = { digest: record.digest, record_version: record.record_version };
  await env.SNAPSHOTS.put(snapshotKey(record.identity_id), JSON.stringify(record), { metadata });
  return record;
}

const timestamp = fc
  .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T23:59:59Z"), noInvalidDate: true })
  .map((d) => d.toISOString());
const text = (max: number) =>
  fc.string({ minLength: 1, maxLength: max, unit: "grapheme" }).filter((s) => s.length <= max);
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
const webUrl = fc.webUrl({ size: "small" }).filter((u) => u.length <= 2048);

/** Arbitrary aggregates within the limits the control plane accepts, for every family and state. */
export const aggregateArbitrary: fc.Arbitrary<PassportAggregate> = fc
  .constantFrom("api" as const, "agent" as const)
  .chain((family) =>
    fc.record({
      passport: fc.record({
        id: fc.constant(null).map(() => mintIdentityId()),
        family: fc.constant(family),
        displayName: nullable(text(200)),
        relationship: fc.constantFrom("responsible" as const, "operator" as const),
        lifecycle: fc.constantFrom(...LIFECYCLE_STATUSES),
        availability: nullable(fc.constantFrom("available" as const, "degraded" as const, "unavailable" as const)),
        environment: nullable(text(64)),
        version: nullable(text(64)),
        stateAsOf: timestamp,
        recheckRequired: fc.boolean(),
        duplicateOf: nullable(fc.constant(null).map(() => mintIdentityId())),
        recordVersion: fc.integer({ min: 1, max: 1_000_000 }),
      }),
      organisation: fc.record({ id: text(64), name: text(200) }),
      parent: nullable(fc.record({ id: text(64), name: text(200) })),
      bindings: fc.array(
        fc.record({
          class: fc.constantFrom(...BINDING_CLASSES_BY_FAMILY[family]),
          value: fc.oneof(webUrl, text(300)),
          label: nullable(text(200)),
          boundAt: timestamp,
          environment: nullable(text(64)),
          version: nullable(text(64)),
        }),
        { maxLength: 6 },
      ),
      evidence: fc.array(
        fc.record({
          id: text(64),
          claim: text(200),
          source: text(500),
          scope: text(500),
          reference: nullable(webUrl),
          observedAt: timestamp,
          freshUntil: nullable(timestamp),
          withdrawnAt: nullable(timestamp),
        }),
        { maxLength: 4 },
      ),
      authority: fc.array(
        fc.oneof(
          fc.record({
            action: text(200),
            context: text(1000),
            grantedBy: nullable(text(200)),
            expiresAt: nullable(timestamp),
          }),
          // Structured: the grantor the service checked, scope and limits in any combination.
          fc.record({
            action: fc.constantFrom("payments.refund", "payments.*", "*", "deploy.production"),
            context: nullable(text(1000)),
            grantedBy: fc.constant(null),
            expiresAt: timestamp,
            resource: nullable(text(500)),
            amountValue: nullable(fc.constantFrom("0.01", "100.00", "250", "999999999999999.999999")),
            amountCurrency: fc.constantFrom("EUR", "USD", "JPY"),
            rateCount: nullable(fc.integer({ min: 1, max: 1_000_000 })),
            ratePer: fc.constantFrom("second" as const, "minute" as const, "hour" as const, "day" as const),
            grantedByKind: fc.constantFrom("organisation" as const, "passport" as const),
            grantedById: text(64),
            grantedByRelationship: fc.constantFrom("responsible" as const, "parent" as const, "passport" as const),
            grantedByRole: nullable(fc.constantFrom("owner" as const, "admin" as const)),
            grantedAt: timestamp,
          }),
        ),
        { maxLength: 3 },
      ),
    }),
  );

/** Any host reaches the resolver in tests; the path is what matters. */
export const BASE = "https://resolver.test";
