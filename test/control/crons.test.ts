// The control plane's cron triggers, run as the platform runs them at simulated times
// (test/support/crons.ts, docs/platform-model.md): what the Dashboard promises of the scheduler
// holds for the schedule its wrangler.toml declares.
import { describe, expect, it } from "vitest";
import { fireTimesBetween } from "../../workers/platform-model/src/cron.ts";
import { Caller, resolve } from "../support/api.ts";
import { CONTROL_CRONS, runCronsBetween } from "../support/crons.ts";

describe("the control plane's crons at simulated times", () => {
  it("fire at least once in any minute of a day, as the Dashboard's 'within a minute' assumes", () => {
    const start = Date.parse("2026-03-01T00:00:00Z");
    const times = CONTROL_CRONS.flatMap((cron) => fireTimesBetween(cron, start, start + 86_400_000)).sort(
      (a, b) => a - b,
    );
    expect(times[0]).toBeLessThanOrEqual(start + 60_000);
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    expect(Math.max(...gaps)).toBeLessThanOrEqual(60_000);
  });

  it("a reactivated passport that waits for nothing is cleared by the crons of the next minute, and published", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport({ display_name: "Nothing to re-check" });
    await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "suspended", reason: "incident" });
    const reactivated = await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "active" });
    expect(reactivated.state).toMatchObject({ recheck_required: true });
    expect((await admin.json("GET", `/v1/passports/${id}/recheck`)).pending).toEqual({ bindings: [], claims: [] });

    const now = Date.now();
    const ran = await runCronsBetween(now, now + 60_000);
    expect(ran.length).toBeGreaterThan(0);
    const view = await admin.json("GET", `/v1/passports/${id}`);
    expect(view.state.recheck_required).toBe(false);
    expect(view.publication.status).toBe("published");
    const { record } = await resolve(id);
    expect(record.record_version).toBe(view.record_version);
    expect(record.state.recheck_required).toBeUndefined();
  });
});
