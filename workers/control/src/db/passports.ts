import type { PassportAggregate } from "@passport/domain";
import { and, asc, eq, isNull } from "drizzle-orm";
import type { BindingInput } from "../requests.ts";
import type { Database } from "./client.ts";
import { organisationWithParent } from "./organisations.ts";
import { authority, bindings, events, evidence, outbox, passports } from "./schema.ts";

export type PassportRow = typeof passports.$inferSelect;

export interface NewPassport {
  id: string;
  organisationId: string;
  family: "api" | "agent";
  displayName?: string;
  environment?: string;
  version?: string;
  bindings: BindingInput[];
  actor: string;
  at: string;
}

/** The statements that create a passport, its history event and its pending publication. */
export function createPassportStatements(db: Database, input: NewPassport) {
  const passportInsert = db.insert(passports).values({
    id: input.id,
    organisationId: input.organisationId,
    family: input.family,
    displayName: input.displayName,
    environment: input.environment,
    version: input.version,
    stateAsOf: input.at,
    createdAt: input.at,
    updatedAt: input.at,
  });
  const bindingInserts = input.bindings.map((binding) =>
    db.insert(bindings).values({
      id: crypto.randomUUID(),
      passportId: input.id,
      class: binding.class,
      value: binding.value,
      label: binding.label,
      boundAt: input.at,
    }),
  );
  return [
    passportInsert,
    ...bindingInserts,
    db.insert(events).values({
      passportId: input.id,
      organisationId: input.organisationId,
      actor: input.actor,
      at: input.at,
      kind: "passport.created",
      detail: { family: input.family, bindings: input.bindings.length },
      recordVersion: 1,
    }),
    enqueuePublication(db, input.id, 1, input.at),
  ] as const;
}

/** Records that `passportId` owes a publication of `recordVersion` (coalescing with any pending one). */
export function enqueuePublication(db: Database, passportId: string, recordVersion: number, at: string) {
  return db
    .insert(outbox)
    .values({ passportId, recordVersion, nextAttemptAt: at })
    .onConflictDoUpdate({ target: outbox.passportId, set: { recordVersion, nextAttemptAt: at, attempts: 0 } });
}

export async function findPassport(db: Database, id: string): Promise<PassportRow | undefined> {
  return db.query.passports.findFirst({ where: eq(passports.id, id) });
}

/** Everything the public record is projected from, read from D1 (never from the resolver). */
export async function loadAggregate(db: Database, id: string): Promise<PassportAggregate | undefined> {
  const passport = await findPassport(db, id);
  if (!passport) return undefined;
  const [owner, boundList, evidenceList, authorityList] = await Promise.all([
    organisationWithParent(db, passport.organisationId),
    db.select().from(bindings).where(eq(bindings.passportId, id)).orderBy(asc(bindings.boundAt), asc(bindings.id)),
    db
      .select()
      .from(evidence)
      .where(and(eq(evidence.passportId, id), isNull(evidence.withdrawnAt)))
      .orderBy(asc(evidence.observedAt), asc(evidence.id)),
    db
      .select()
      .from(authority)
      .where(eq(authority.passportId, id))
      .orderBy(asc(authority.createdAt), asc(authority.id)),
  ]);
  if (!owner) throw new Error(`passport ${id} has no organisation`);
  return {
    passport,
    organisation: owner.organisation,
    parent: owner.parent,
    bindings: boundList,
    evidence: evidenceList,
    authority: authorityList,
  };
}
