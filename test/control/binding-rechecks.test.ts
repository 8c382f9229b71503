import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type Body, Caller, resolve } from "../support/api.ts";
import { dashboard, verifiedManifest } from "../support/control-fixtures.ts";
import { json, serve, txt, uniqueHost } from "../support/hosts.ts";
import { recheckAt } from "../support/rechecks.ts";
import { besideOrganisation, everyShard } from "../support/shards.ts";

// The re-check rules (docs/bindings.md, "Re-checks"): unreachable is not a mismatch, a lapsed
// binding recovers, and one organisation's failing checks never delay another's renewals.

const HOUR = 3600_000;
const DAY = 24 * HOUR;

async function bindingView(caller: Caller, id: string, bindingId: string): Promise<Body> {
  const passport = await caller.json("GET", `/v1/passports/${id}`);
  return passport.bindings.find((b: Body) => b.id === bindingId);
}

/** The time the scheduled re-check first takes a binding verified by `proof`. */
function firstDue(proof: Body): Date {
  return new Date(Date.parse(proof.next_check_at));
}

describe("scheduled re-checks", () => {
  it("schedules a new proof's re-check before the re-check window, spread over six hours", async () => {
    const caller = await Caller.create("editor");
    const { proof } = await verifiedManifest(caller);
    const end = Date.parse(proof.verification.fresh_until);
    const due = Date.parse(proof.next_check_at);
    expect(due).toBeLessThanOrEqual(end - 2 * DAY);
    expect(due).toBeGreaterThanOrEqual(end - 2 * DAY - 6 * HOUR);
    expect(proof.checks).toEqual([{ at: proof.verification.verified_at, outcome: "verified", reason: null }]);
    // Nothing is due before then.
    expect((await recheckAt(new Date(due - 60_000))).has(proof.id)).toBe(false);
  });

  it.each([
    ["a 503", { status: 503 }, "answered HTTP 503"],
    ["a 429", { status: 429 }, "answered HTTP 429"],
    ["a timeout", { ...json({}), delay_ms: 10_000 }, "within 3000 ms"],
  ])(
    "one transient failure (%s) keeps the binding verified and retries it within minutes",
    async (_, answer, reason) => {
      const caller = await Caller.create("editor");
      const { host, id, bindingId, proof } = await verifiedManifest(caller);
      await serve(host, { "/card.json": answer });
      const at = firstDue(proof);
      expect((await recheckAt(at)).get(bindingId)).toBe("unreachable");

      const binding = await bindingView(caller, id, bindingId);
      expect(binding.verification).toEqual(proof.verification);
      expect(binding.checks[0]).toMatchObject({ at: at.toISOString(), outcome: "unreachable" });
      expect(binding.checks[0].reason).toContain(reason);
      // Backoff: 2.5 to 5 minutes after the first failure.
      const retry = Date.parse(binding.next_check_at) - at.getTime();
      expect(retry).toBeGreaterThanOrEqual(150_000);
      expect(retry).toBeLessThanOrEqual(300_000);
      expect((await resolve(id)).record.bindings[0].verification).toEqual(proof.verification);

      // The host answers again: the retry renews the proof.
      await serve(host, { "/card.json": json({ passport: id }) });
      expect((await recheckAt(new Date(Date.parse(binding.next_check_at)))).get(bindingId)).toBe("verified");
      const renewed = await bindingView(caller, id, bindingId);
      expect(Date.parse(renewed.verification.fresh_until)).toBeGreaterThan(Date.parse(proof.verification.fresh_until));
      expect(renewed.checks.map((c: Body) => c.outcome)).toEqual(["verified", "unreachable", "verified"]);
    },
  );

  it("DNS over HTTPS failing (SERVFAIL) is unreachable too; no TXT record where the proof was the TXT record is a mismatch", async () => {
    const caller = await Caller.create("owner");
    const host = uniqueHost("docs");
    const passport = await caller.createPassport({
      family: "api",
      bindings: [{ class: "documentation", value: `https://${host}/guide` }],
    });
    const id = passport.identity_id as string;
    const bindingId = passport.bindings[0].id as string;
    const first = await caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
    await txt(first.instructions.dns_txt.name, [first.instructions.dns_txt.value]);
    const proven = await caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
    expect(proven.passport.bindings[0].verification.method).toBe("dns_txt");

    // The resolver fails: the well-known 404 alone does not contradict a proof made by TXT record.
    const brokenResolver = { ...env, BINDING_DOH_URL: "https://dns-down.example.com/dns-query" };
    await serve("dns-down.example.com", { "/dns-query": { status: 200, ...json({ Status: 2 }) } });
    const at = firstDue(proven.passport.bindings[0]);
    expect((await recheckAt(at, { checkEnv: () => brokenResolver })).get(bindingId)).toBe("unreachable");
    const kept = await bindingView(caller, id, bindingId);
    expect(kept.verification.state).toBe("verified");
    expect(kept.checks[0].reason).toContain("DNS status 2");

    // The record is removed: both methods answered, neither proves control.
    await txt(first.instructions.dns_txt.name, []);
    expect((await recheckAt(new Date(Date.parse(kept.next_check_at)))).get(bindingId)).toBe("mismatch");
    expect((await bindingView(caller, id, bindingId)).verification.state).toBe("lapsed");
  });

  it("a contradicting answer lapses the binding at once, and the lapse is retried a day later, not sooner", async () => {
    const caller = await Caller.create("editor");
    const { host, manifest, id, bindingId, proof } = await verifiedManifest(caller);
    await serve(host, { "/card.json": json({ passport: "someone else" }) });
    const at = firstDue(proof);
    expect((await recheckAt(at)).get(bindingId)).toBe("mismatch");
    const lapsed = await bindingView(caller, id, bindingId);
    expect(lapsed.verification).toMatchObject({
      state: "lapsed",
      reason: `${manifest} does not name ${id} or its resolver URL`,
    });
    expect(lapsed.checks[0]).toMatchObject({ outcome: "mismatch", reason: lapsed.verification.reason });
    const retry = Date.parse(lapsed.next_check_at) - at.getTime();
    expect(retry).toBeGreaterThanOrEqual(DAY / 2);
    expect(retry).toBeLessThanOrEqual(DAY);
    expect((await resolve(id)).record.bindings[0].verification.state).toBe("lapsed");
    expect((await recheckAt(new Date(at.getTime() + retry - 60_000))).has(bindingId)).toBe(false);
  });

  it("a lapsed binding is re-checked on the slower schedule and is verified again when its proof returns", async () => {
    const caller = await Caller.create("editor");
    const { host, id, bindingId, proof } = await verifiedManifest(caller);
    await serve(host, { "/card.json": { status: 404 } });
    const at = firstDue(proof);
    expect((await recheckAt(at)).get(bindingId)).toBe("mismatch");

    // Still missing a day later: it stays lapsed and the next try is further out (1 to 2 days).
    const second = new Date(Date.parse((await bindingView(caller, id, bindingId)).next_check_at));
    expect((await recheckAt(second)).get(bindingId)).toBe("mismatch");
    const stillLapsed = await bindingView(caller, id, bindingId);
    expect(stillLapsed.verification.state).toBe("lapsed");
    const gap = Date.parse(stillLapsed.next_check_at) - second.getTime();
    expect(gap).toBeGreaterThanOrEqual(DAY);
    expect(gap).toBeLessThanOrEqual(2 * DAY);

    // The document is back: the next scheduled check verifies it again, in the record and the history.
    await serve(host, { "/card.json": json({ passport: id }) });
    expect((await recheckAt(new Date(Date.parse(stillLapsed.next_check_at)))).get(bindingId)).toBe("verified");
    const { record } = await resolve(id);
    expect(record.bindings[0].verification).toMatchObject({ state: "verified", method: "document_names_id" });
    const history = await caller.json("GET", `/v1/passports/${id}/history`);
    expect(history.items.map((e: Body) => e.kind).slice(-3)).toEqual([
      "binding.verified",
      "binding.lapsed",
      "binding.verified",
    ]);
  });

  it("a host that stays unreachable keeps the binding verified until its proof runs out, then lapses it as expired", async () => {
    const caller = await Caller.create("editor");
    const { host, id, bindingId, proof } = await verifiedManifest(caller);
    await serve(host, { "/card.json": { status: 502 } });
    let at = firstDue(proof);
    const end = Date.parse(proof.verification.fresh_until);
    let tries = 0;
    for (; tries < 40; tries++) {
      const outcome = (await recheckAt(at)).get(bindingId);
      const binding = await bindingView(caller, id, bindingId);
      if (outcome !== "unreachable") {
        expect(outcome).toBe("expired");
        expect(at.getTime()).toBeGreaterThanOrEqual(end);
        expect(binding.verification.state).toBe("lapsed");
        expect(binding.verification.reason).toContain("the proof ran out without an answer");
        break;
      }
      expect(binding.verification.state).toBe("verified");
      // Never retried later than the end of the proof.
      expect(Date.parse(binding.next_check_at)).toBeLessThanOrEqual(end);
      at = new Date(Date.parse(binding.next_check_at));
    }
    // Backoff doubles up to six hours: two days of outage take about a dozen tries, not hundreds.
    expect(tries).toBeGreaterThan(5);
    expect(tries).toBeLessThan(20);
  });

  it("a member's check that cannot reach the host keeps a fresh proof too", async () => {
    const caller = await Caller.create("editor");
    const { host, id, bindingId, proof } = await verifiedManifest(caller);
    await serve(host, { "/card.json": { status: 500 } });
    const outcome = await caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
    expect(outcome.result).toBe("not_proven");
    expect(outcome.passport.bindings[0].verification).toEqual(proof.verification);
    expect(outcome.passport.bindings[0].checks[0]).toMatchObject({ outcome: "unreachable" });

    // The Dashboard shows each check with its reason and when the next one runs.
    const page = await dashboard(caller, `/dashboard/passports/${id}`);
    const html = await page.text();
    expect(html).toContain("Recent checks (2)");
    expect(html).toMatch(/<strong>unreachable, kept<\/strong>: https:\/\/[^<]*answered HTTP 500/);
    expect(html).toContain("<strong>verified</strong>");
    expect(html).toContain(`datetime="${outcome.passport.bindings[0].next_check_at}"`);
  });

  it("a passport changed while its check runs is renewed anyway, and the check's claim holds its place only until it reports", async () => {
    const caller = await Caller.create("editor");
    const { host, id, bindingId, proof } = await verifiedManifest(caller);
    await serve(host, { "/card.json": { ...json({ passport: id }), delay_ms: 300 } });
    const at = firstDue(proof);
    const [outcomes] = await Promise.all([
      recheckAt(at),
      (async () => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const current = await caller.json("GET", `/v1/passports/${id}`);
        const changed = await caller.request(
          "PATCH",
          `/v1/passports/${id}`,
          { display_name: "Renamed" },
          {
            "if-match": `"v${current.record_version}"`,
          },
        );
        expect(changed.status).toBe(200);
      })(),
    ]);
    expect(outcomes.get(bindingId)).toBe("verified");
    const binding = await bindingView(caller, id, bindingId);
    expect(Date.parse(binding.verification.fresh_until)).toBeGreaterThan(Date.parse(proof.verification.fresh_until));
    expect(Date.parse(binding.next_check_at)).toBeGreaterThan(at.getTime() + 4 * DAY);
    // The renewal read the passport before the change and committed after it, as the next version.
    const kinds = (await caller.json("GET", `/v1/passports/${id}/history`)).items.map((e: Body) => e.kind);
    expect(kinds.at(-1)).toBe("binding.verified");
    expect(kinds.at(-2)).not.toBe("binding.verified");
  });

  it.each(["retired", "marked a duplicate"])(
    "a passport %s is never checked again: the retirement takes its bindings off the schedule",
    async (how) => {
      const caller = await Caller.create("admin");
      const { id, bindingId, proof } = await verifiedManifest(caller);
      expect(proof.next_check_at).not.toBeNull();
      if (how === "retired") {
        await caller.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "retired" });
      } else {
        const survivor = await caller.createPassport({ family: "agent", display_name: "Survivor" });
        await caller.json("POST", `/v1/passports/${id}/duplicate-of`, {
          survivor_id: survivor.identity_id,
          reason: "Registered twice",
        });
      }
      expect((await bindingView(caller, id, bindingId)).next_check_at).toBeNull();
      expect((await recheckAt(new Date(Date.parse(proof.verification.fresh_until) + DAY))).has(bindingId)).toBe(false);
    },
  );
});

/** Takes every binding earlier tests of this file left scheduled off the schedule, so only a test's own are due. */
async function unscheduleAll() {
  for (const shard of everyShard()) await shard.prepare("UPDATE bindings SET next_check_at = NULL").run();
}

/** Sets when the scheduled re-check next takes each of `bindingIds`. */
async function dueAt(bindingIds: string[], at: Date) {
  for (const shard of everyShard()) {
    await shard.batch(
      bindingIds.map((id) =>
        shard.prepare("UPDATE bindings SET next_check_at = ? WHERE id = ?").bind(at.toISOString(), id),
      ),
    );
  }
}

// Each verified manifest is several publications of one passport, a second apart under the
// platform model (KV's per-key write limit), hence the long timeouts below.
describe("fairness between organisations", () => {
  it("20 bindings whose checks always throw, in one organisation, do not delay another organisation's renewals", async () => {
    await unscheduleAll();
    const hostile = await Caller.create("editor");
    // Beside it: each shard claims its own pages, so only organisations of one shard share a page.
    const tenant = await Caller.create("editor", await besideOrganisation(hostile.organisation));
    const hostileBindings: { id: string; bindingId: string }[] = [];
    for (let i = 0; i < 20; i++) hostileBindings.push(await verifiedManifest(hostile));
    const hostileIds = new Set(hostileBindings.map((b) => b.bindingId));
    const tenants: string[] = [];
    for (let i = 0; i < 4; i++) tenants.push((await verifiedManifest(tenant)).bindingId);

    // The hostile organisation's 20 are due first: the old global queue took exactly these, every run.
    const start = new Date(Date.now() + 5 * DAY);
    await dueAt([...hostileIds], new Date(start.getTime() - HOUR));
    await dueAt(tenants.slice(0, 3), start);
    await dueAt([tenants[3] as string], new Date(start.getTime() + 30_000));
    // Their checks throw (a configuration that breaks in the middle of the check).
    const throwing = { ...env, RESOLVER_BASE_URL: undefined } as unknown as Env;
    const checkEnv = (row: { binding_id: string }) => (hostileIds.has(row.binding_id) ? throwing : env);
    // At the old capacity, 20 per run, the tenant's three are renewed in the first run.
    const limits = { pageSize: 20, pages: 1, perOrganisation: 20 };
    const first = await recheckAt(start, { limits, checkEnv });
    for (const b of tenants.slice(0, 3)) expect(first.get(b)).toBe("verified");
    const failed = [...first.entries()].filter(([b]) => hostileIds.has(b));
    expect(failed.map(([, outcome]) => outcome)).toEqual(Array(17).fill("error"));

    // The failed checks moved back by their backoff: the next run takes the three hostile ones
    // left, the tenant's binding that fell due meanwhile, and none that just failed.
    const second = await recheckAt(new Date(start.getTime() + 60_000), { limits, checkEnv });
    expect(second.get(tenants[3] as string)).toBe("verified");
    expect([...second.keys()].filter((b) => hostileIds.has(b))).toHaveLength(3);
    expect(failed.some(([b]) => second.has(b))).toBe(false);

    // Failing checks never lapse a fresh proof: they stay verified and show why in their log.
    const { id, bindingId } = hostileBindings[0] as { id: string; bindingId: string };
    const binding = await bindingView(hostile, id, bindingId);
    expect(binding.verification.state).toBe("verified");
    expect(binding.checks[0]).toMatchObject({ outcome: "error", reason: expect.stringContaining("the check failed") });
    // ...and are tried again after their backoff, not lost.
    const retried = await recheckAt(new Date(Date.parse(binding.next_check_at)), { limits, checkEnv });
    expect(retried.get(bindingId)).toBe("error");
  }, 120_000);

  it("organisations take turns in each page: a backlog of one never fills another's place", async () => {
    await unscheduleAll();
    const big = await Caller.create("editor");
    const small = await Caller.create("editor", await besideOrganisation(big.organisation));
    const bigIds: string[] = [];
    for (let i = 0; i < 12; i++) bigIds.push((await verifiedManifest(big)).bindingId);
    const smallIds = [(await verifiedManifest(small)).bindingId, (await verifiedManifest(small)).bindingId];
    const at = new Date(Date.now() + 6 * DAY);
    await dueAt(bigIds, new Date(at.getTime() - DAY));
    await dueAt(smallIds, at);
    const page = await recheckAt(at, { limits: { pageSize: 6, pages: 1, perOrganisation: 3 } });
    const taken = [...page.keys()];
    expect(taken.filter((b) => smallIds.includes(b)).sort()).toEqual([...smallIds].sort());
    // The big organisation gets at most its share of the page, not the whole of it.
    expect(taken.filter((b) => bigIds.includes(b)).length).toBeLessThanOrEqual(3);
  }, 120_000);
});
