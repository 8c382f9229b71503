import { env } from "cloudflare:workers";
import { mintIdentityId } from "@passport/domain";
import { beforeAll, describe, expect, it } from "vitest";
import { claimDuePages, SCHEDULER } from "../../workers/control/src/binding-checks/recheck.ts";
import { RENEWAL } from "../../workers/control/src/binding-checks/schedule.ts";
import { json, serve } from "../support/hosts.ts";
import { recheckAt } from "../support/rechecks.ts";

// The scheduler at 100,000 verified bindings (docs/scaling.md): seeded with set-based inserts into
// the local D1, then driven minute by minute and hour by hour. The first minute's checks run through
// the queue consumer's own function against hosts that prove them; after that the consumer's part
// (each claimed check renewed) is stood in for by one statement per page, as a renewal leaves the
// binding at the earliest (the real one spreads the next check up to six hours later).

const BINDINGS = 100_000;
const ORGANISATIONS = 200;
const PER_PASSPORT = 5;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = Date.parse("2030-01-01T00:00:00.000Z");

const iso = (ms: number) => new Date(ms).toISOString();

async function seed() {
  const count = (n: number) => `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${n - 1})`;
  // Due times spread evenly over one renewal interval from T0, as a steady state leaves them; each
  // proof ends two days after its binding is due.
  const interval = RENEWAL.intervalMs;
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO organisations (id, name) ${count(ORGANISATIONS)} SELECT 'org_cap_' || i, 'Capacity ' || i FROM n`,
    ),
    env.DB.prepare(
      `INSERT INTO passports (id, organisation_id, family, state_as_of, updated_at)
       ${count(BINDINGS / PER_PASSPORT)}
       SELECT printf('psp_cap%06d', i), 'org_cap_' || (i % ${ORGANISATIONS}), 'api', ?1, ?1 FROM n`,
    ).bind(iso(T0 - DAY)),
    env.DB.prepare(
      `INSERT INTO bindings (id, passport_id, class, value, bound_at, verification_state, verification_method,
         verified_at, verification_fresh_until, next_check_at)
       ${count(BINDINGS)}
       SELECT printf('bnd_cap%06d', i), printf('psp_cap%06d', i / ${PER_PASSPORT}), 'documentation',
         'https://cap-' || i || '.example.com/', ?1, 'verified', 'http_well_known', ?1,
         strftime('%Y-%m-%dT%H:%M:%fZ', (?2 + i * ?3) / 1000.0, 'unixepoch', '+2 days'),
         strftime('%Y-%m-%dT%H:%M:%fZ', (?2 + i * ?3) / 1000.0, 'unixepoch')
       FROM n`,
    ).bind(iso(T0 - DAY), T0, interval / BINDINGS),
  ]);
}

/** What the consumer leaves behind for a page: each claimed binding renewed at `now`. */
async function renew(claim: string, now: number) {
  await env.DB.prepare(
    `UPDATE bindings SET check_claim = NULL, verified_at = ?1, verification_fresh_until = ?2, next_check_at = ?3
     WHERE check_claim = ?4`,
  )
    .bind(iso(now), iso(now + RENEWAL.proofLifetimeMs), iso(now + RENEWAL.intervalMs), claim)
    .run();
}

async function scalar(query: string, ...params: unknown[]): Promise<number> {
  const row = await env.DB.prepare(query)
    .bind(...params)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/**
 * One scheduler run at `now` whose claimed checks run through the consumer's own function
 * (runScheduledCheck), each binding's host serving the passport's well-known document. The
 * passports checked are copied under well-formed identity ids first (the seed's are not), as their
 * records are published; the old rows stay, without bindings.
 */
async function checkedRun(now: number) {
  const dueQuery = "SELECT id, passport_id FROM bindings WHERE id LIKE 'bnd_cap%' AND next_check_at <= ?";
  const { results: seeded } = await env.DB.prepare(dueQuery).bind(iso(now)).all<{ passport_id: string }>();
  for (const old of new Set(seeded.map((row) => row.passport_id))) {
    const id = mintIdentityId();
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO passports (id, organisation_id, family, state_as_of, updated_at)
         SELECT ?1, organisation_id, family, state_as_of, updated_at FROM passports WHERE id = ?2`,
      ).bind(id, old),
      env.DB.prepare("UPDATE bindings SET passport_id = ?1 WHERE passport_id = ?2").bind(id, old),
    ]);
  }
  const { results: due } = await env.DB.prepare(dueQuery).bind(iso(now)).all<{ id: string; passport_id: string }>();
  for (const { id, passport_id } of due) {
    await serve(`cap-${Number(id.slice(7))}.example.com`, {
      "/.well-known/passport-identity.json": json({ identities: [{ identity_id: passport_id }] }),
    });
  }
  return { due: due.map((row) => row.id), outcomes: await recheckAt(new Date(now)) };
}

/** One scheduler run at `now` with the consumer keeping up; returns how many it claimed. */
async function run(now: number): Promise<number> {
  return claimDuePages(env, new Date(now), (_, claim) => renew(claim, now));
}

describe("renewal at 100,000 verified bindings", () => {
  /** What the minute-by-minute hour claimed: the need the backlog run's capacity is compared with. */
  let hourClaimed = 0;

  beforeAll(async () => {
    await seed();
  }, 120_000);

  it("is seeded as planned: 100,000 verified bindings in 200 organisations, one renewal interval of due times", async () => {
    expect(
      await scalar("SELECT count(*) AS n FROM bindings WHERE id LIKE 'bnd_cap%' AND verification_state = 'verified'"),
    ).toBe(BINDINGS);
    expect(await scalar("SELECT count(DISTINCT organisation_id) AS n FROM passports WHERE id LIKE 'psp_cap%'")).toBe(
      ORGANISATIONS,
    );
    // docs/scaling.md: the need is the bindings over the renewal interval, 877 in an hour.
    expect(
      await scalar(
        "SELECT count(*) AS n FROM bindings WHERE id LIKE 'bnd_cap%' AND next_check_at > ?1 AND next_check_at <= ?2",
        iso(T0),
        iso(T0 + HOUR),
      ),
    ).toBeCloseTo(877.2, 0);
  });

  it("the claim statement reads only due rows, through the partial index", async () => {
    const plan = await env.DB.prepare(
      `EXPLAIN QUERY PLAN SELECT b.id FROM bindings b INDEXED BY bindings_next_check
       JOIN passports p ON p.id = b.passport_id WHERE b.next_check_at <= ?`,
    )
      .bind(iso(T0))
      .all<{ detail: string }>();
    expect(plan.results.map((r) => r.detail).join("\n")).toContain("USING INDEX bindings_next_check (next_check_at<?)");
  });

  it("minute by minute for an hour, every run claims everything due: nothing waits for a later run", async () => {
    // The first minute through the real consumer: every due binding is checked and renewed.
    const first = T0 + MINUTE;
    const { due, outcomes } = await checkedRun(first);
    expect(due.length).toBeGreaterThan(0);
    expect([...outcomes.keys()].sort()).toEqual(due.sort());
    expect(new Set(outcomes.values())).toEqual(new Set(["verified"]));
    expect(
      await scalar(
        "SELECT count(*) AS n FROM bindings WHERE id LIKE 'bnd_cap%' AND verified_at = ?1 AND next_check_at >= ?2",
        iso(first),
        iso(first + RENEWAL.intervalMs),
      ),
    ).toBe(due.length);
    let claimed = outcomes.size;
    expect(await scalar("SELECT count(*) AS n FROM bindings WHERE next_check_at <= ?", iso(first))).toBe(0);
    const started = performance.now();
    for (let minute = 2; minute <= 60; minute++) {
      const now = T0 + minute * MINUTE;
      claimed += await run(now);
      expect(await scalar("SELECT count(*) AS n FROM bindings WHERE next_check_at <= ?", iso(now))).toBe(0);
    }
    const perRunMs = (performance.now() - started) / 59;
    // An hour's renewals of 100,000 bindings: 877, well inside one run's 10,000 (measured below).
    expect(claimed).toBeGreaterThanOrEqual(874);
    expect(claimed).toBeLessThanOrEqual(880);
    hourClaimed = claimed;
    console.log(JSON.stringify({ event: "capacity_minutes", claimed, per_run_ms: Math.round(perRunMs) }));
  }, 120_000);

  it("hour by hour over a whole renewal interval, no proof runs out and every binding is renewed once", async () => {
    // A harsher cadence than the cron's (an hour's due work per run): still nothing is left behind.
    const start = T0 + HOUR;
    let claimed = 0;
    for (let hour = 1; hour * HOUR <= RENEWAL.intervalMs; hour++) {
      const now = start + hour * HOUR;
      claimed += await run(now);
      expect(await scalar("SELECT count(*) AS n FROM bindings WHERE verification_fresh_until <= ?", iso(now))).toBe(0);
    }
    expect(claimed).toBeGreaterThanOrEqual(BINDINGS - 900);
    expect(claimed).toBeLessThanOrEqual(BINDINGS);
  }, 300_000);

  it("a backlog of 15,000 due at once (an outage) is claimed 10,000 a run, organisations taking turns", async () => {
    const BACKLOG = 15_000;
    const now = T0 + 30 * DAY;
    await env.DB.prepare("UPDATE bindings SET next_check_at = ?")
      .bind(iso(now + 30 * DAY))
      .run();
    await env.DB.prepare(
      `UPDATE bindings SET next_check_at = ?1 WHERE id IN (SELECT id FROM bindings WHERE id LIKE 'bnd_cap%' LIMIT ?2)`,
    )
      .bind(iso(now - HOUR), BACKLOG)
      .run();
    // Turns: a page of 200 takes one binding of each of the 200 organisations.
    const turns = new Set<string>();
    await claimDuePages(
      env,
      new Date(now),
      async (rows, claim) => {
        // Binding i is of passport i / PER_PASSPORT, of organisation (i / PER_PASSPORT) % ORGANISATIONS.
        for (const row of rows) {
          turns.add(`org_cap_${Math.floor(Number(row.binding_id.slice(7)) / PER_PASSPORT) % ORGANISATIONS}`);
        }
        await renew(claim, now);
      },
      { pageSize: ORGANISATIONS, pages: 1, perOrganisation: 100 },
    );
    expect(turns.size).toBe(ORGANISATIONS);

    const pages: number[] = [];
    const started = performance.now();
    const claimed = await claimDuePages(env, new Date(now), async (rows, claim) => {
      pages.push(rows.length);
      await renew(claim, now);
    });
    const runMs = performance.now() - started;
    // One run claims its full 10,000 (20 pages of 500) and the rest of the backlog is claimed the next minute.
    expect(claimed).toBe(SCHEDULER.pageSize * SCHEDULER.pages);
    // An hour of such runs claims more than 100 times what an hour of renewals needs (measured above).
    expect(hourClaimed).toBeGreaterThan(0);
    expect(claimed * 60).toBeGreaterThan(hourClaimed * 100);
    expect(pages).toEqual(Array(SCHEDULER.pages).fill(SCHEDULER.pageSize));
    expect(await run(now + MINUTE)).toBe(BACKLOG - ORGANISATIONS - claimed);
    console.log(JSON.stringify({ event: "capacity_backlog", claimed, pages: pages.length, run_ms: Math.round(runMs) }));
  }, 120_000);
});
