import type { PassportAggregate } from "@passport/domain";

/** The Dashboard API's view of a passport: the stored state plus where its public proof lives. */
export function passportView(aggregate: PassportAggregate & { passport: { organisationId?: string } }, env: Env) {
  const { passport } = aggregate;
  return {
    identity_id: passport.id,
    family: passport.family,
    display_name: passport.displayName ?? null,
    organisation: { id: aggregate.organisation.id, name: aggregate.organisation.name },
    state: {
      lifecycle: passport.lifecycle,
      availability: passport.availability ?? null,
      environment: passport.environment ?? null,
      version: passport.version ?? null,
      as_of: passport.stateAsOf,
    },
    bindings: aggregate.bindings.map((b) => ({
      class: b.class,
      value: b.value,
      label: b.label ?? null,
      bound_at: b.boundAt,
    })),
    record_version: passport.recordVersion,
    resolver_url: `${env.RESOLVER_BASE_URL}/api/p/${passport.id}.json`,
  };
}
