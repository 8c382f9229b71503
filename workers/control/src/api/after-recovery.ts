import { z } from "zod";
import type { Database } from "../db/client.ts";
import { listPassports } from "../db/passports.ts";

// Spec 5.2: "After recovery the customer confirms the Dashboard shows the intended estate and
// re-checks the Resolver." After an operator-run owner recovery (docs/roles.md), the recovered
// owner's view of the organisation says so and lists what to confirm and where to re-check it.

/** How long after a recovery the guidance is shown to the recovered owner. */
const AFTER_RECOVERY_DAYS = 30;
/** At most this many passports are listed; the Dashboard's passport list has the rest. */
const LISTED_PASSPORTS = 50;

export const AfterRecovery = z
  .object({
    recovered_at: z.string(),
    steps: z.array(z.string()),
    passports: z.array(
      z.object({
        identity_id: z.string(),
        display_name: z.string().nullable(),
        family: z.enum(["api", "agent"]),
        lifecycle: z.string(),
        dashboard_url: z.string(),
        resolver_url: z.string(),
        machine_json_url: z.string(),
      }),
    ),
    more_passports: z.boolean().describe("True when the organisation has more passports than listed here."),
  })
  .nullable()
  .describe(
    `Shown to the owner an operator recovered, for ${AFTER_RECOVERY_DAYS} days after the recovery (spec 5.2): confirm the estate, re-check the Resolver.`,
  );
type AfterRecovery = z.infer<typeof AfterRecovery>;

const AFTER_RECOVERY_STEPS = [
  "Confirm the Dashboard shows the intended estate: this organisation, its parent and children, its members and the passports listed here. Recovery changed none of them.",
  "Re-check each passport in the Resolver (its proof page or machine JSON): the same identity id, family, organisation, state and bindings as before the recovery.",
  "Remove the lost sign-in from the members once you have confirmed the estate.",
];

/**
 * The guidance after an owner recovery, for `subject` when they are the owner the organisation's
 * latest `organisation.recovered` event named and it is recent; otherwise null. `history` is the
 * organisation's history, newest first.
 */
export async function afterRecovery(
  db: Database,
  resolverBaseUrl: string,
  organisationId: string,
  subject: string,
  history: { kind: string; at: string; detail: Record<string, unknown> }[],
  now = Date.now(),
): Promise<AfterRecovery> {
  const recovery = history.find((e) => e.kind === "organisation.recovered");
  if (!recovery || recovery.detail.new_owner !== subject) return null;
  if (now - Date.parse(recovery.at) > AFTER_RECOVERY_DAYS * 86_400_000) return null;
  const listed = await listPassports(db, { organisationIds: [organisationId], limit: LISTED_PASSPORTS + 1 });
  return {
    recovered_at: recovery.at,
    steps: AFTER_RECOVERY_STEPS,
    passports: listed.slice(0, LISTED_PASSPORTS).map((p) => ({
      identity_id: p.id,
      display_name: p.displayName,
      family: p.family,
      lifecycle: p.lifecycle,
      dashboard_url: `/dashboard/passports/${p.id}`,
      resolver_url: `${resolverBaseUrl}/p/${p.id}`,
      machine_json_url: `${resolverBaseUrl}/api/p/${p.id}.json`,
    })),
    more_passports: listed.length > LISTED_PASSPORTS,
  };
}
