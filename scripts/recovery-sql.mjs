// The SQL of the operator-run owner recovery (docs/roles.md, "Recovery"): makes `subject` an owner
// of `organisation` and records, in the organisation's history, who approved it and why. Nothing
// else changes: the organisation, its parent, its passports and their history stay as they are
// (spec 5.2). Both statements apply only when the organisation exists.

const ID = /^[A-Za-z0-9_.:@|-]{1,256}$/;
const OPERATOR = /^[A-Za-z0-9_.:@+-]{1,128}$/;

/** A SQL string literal. Inputs are also checked against strict patterns before they get here. */
function literal(text) {
  return `'${String(text).replaceAll("'", "''")}'`;
}

/**
 * @param {{ organisation: string, subject: string, approvedBy: string, reason: string, at?: string }} input
 * @returns {string[]} the statements, to run in one `wrangler d1 execute` (one transaction)
 */
export function recoverySql({ organisation, subject, approvedBy, reason, at = new Date().toISOString() }) {
  if (!ID.test(organisation ?? "")) throw new Error("--org: an organisation id");
  if (!ID.test(subject ?? "")) throw new Error("--subject: the identity-provider subject of the new owner");
  if (!OPERATOR.test(approvedBy ?? "")) throw new Error("--approved-by: who approved the recovery (operator id)");
  if (!reason || reason.length > 1000) throw new Error("--reason: why (a ticket reference), at most 1000 characters");
  const org = literal(organisation);
  const exists = `WHERE EXISTS (SELECT 1 FROM organisations WHERE id = ${org})`;
  return [
    `INSERT INTO members (organisation_id, subject, role) SELECT ${org}, ${literal(subject)}, 'owner' ${exists} ` +
      `ON CONFLICT (organisation_id, subject) DO UPDATE SET role = 'owner';`,
    `INSERT INTO organisation_events (organisation_id, actor, at, kind, detail) SELECT ${org}, ${literal(
      `operator:${approvedBy}`,
    )}, ${literal(at)}, 'organisation.recovered', json_object('new_owner', ${literal(subject)}, 'approved_by', ${literal(
      approvedBy,
    )}, 'reason', ${literal(reason)}) ${exists};`,
  ];
}

/** The directory's statement for the shard an organisation is in (docs/sharding.md); none: shard 0. */
export function shardLookupSql(organisation) {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(organisation ?? "")) throw new Error("--org must be an organisation id");
  return `SELECT shard FROM organisation_shards WHERE organisation_id = '${organisation}'`;
}
