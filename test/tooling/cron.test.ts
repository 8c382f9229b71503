// The cron schedule of the platform model (workers/platform-model/src/cron.ts): the times a cron
// trigger fires, as the platform computes them (UTC, five fields).
import { describe, expect, it } from "vitest";
import { cronsOf, fireTimesBetween, nextFireTime, parseCron } from "../../workers/platform-model/src/cron.ts";

const at = (iso: string) => Date.parse(iso);
const next = (cron: string, iso: string) => new Date(nextFireTime(cron, at(iso))).toISOString();

describe("nextFireTime", () => {
  it("every minute: the next whole minute, never the instant itself", () => {
    expect(next("* * * * *", "2026-01-01T00:00:30Z")).toBe("2026-01-01T00:01:00.000Z");
    expect(next("* * * * *", "2026-01-01T00:01:00Z")).toBe("2026-01-01T00:02:00.000Z");
  });

  it("lists, ranges, steps and names", () => {
    expect(next("0 * * * *", "2026-01-01T10:00:00Z")).toBe("2026-01-01T11:00:00.000Z");
    expect(next("*/15 9-17 * * MON-FRI", "2026-01-02T17:50:00Z")).toBe("2026-01-05T09:00:00.000Z");
    expect(next("5,35 */6 * * *", "2026-01-01T06:06:00Z")).toBe("2026-01-01T06:35:00.000Z");
    expect(next("0 0 1 JAN,JUL *", "2026-02-10T00:00:00Z")).toBe("2026-07-01T00:00:00.000Z");
    expect(next("30 4 29 2 *", "2026-03-01T00:00:00Z")).toBe("2028-02-29T04:30:00.000Z");
  });

  it("day of month and day of week both restricted: either matches; 7 is Sunday", () => {
    // 2026-02-13 is a Friday; the 1st of March a Sunday.
    expect(next("0 0 13 * FRI", "2026-02-06T12:00:00Z")).toBe("2026-02-13T00:00:00.000Z");
    expect(next("0 0 1 * 5", "2026-02-14T00:00:00Z")).toBe("2026-02-20T00:00:00.000Z");
    expect(next("0 12 * * 7", "2026-02-27T00:00:00Z")).toBe("2026-03-01T12:00:00.000Z");
  });

  it("refuses what it does not understand rather than guess", () => {
    for (const cron of ["* * * *", "0 0 L * *", "0 0 * * 5#3", "60 * * * *", "5-1 * * * *", "*/0 * * * *"]) {
      expect(() => parseCron(cron), cron).toThrow();
    }
  });
});

describe("fireTimesBetween and cronsOf", () => {
  it("every firing in a stretch of simulated time, in order", () => {
    const times = fireTimesBetween("*/20 * * * *", at("2026-01-01T00:00:00Z"), at("2026-01-01T01:00:00Z"));
    expect(times.map((t) => new Date(t).toISOString().slice(11, 16))).toEqual(["00:20", "00:40", "01:00"]);
  });

  it("an environment's own triggers, else the top level's", () => {
    const config = { triggers: { crons: ["0 * * * *"] }, env: { development: { triggers: { crons: ["* * * * *"] } } } };
    expect(cronsOf(config, "development")).toEqual(["* * * * *"]);
    expect(cronsOf(config, "staging")).toEqual(["0 * * * *"]);
    expect(cronsOf(config)).toEqual(["0 * * * *"]);
    expect(cronsOf({})).toEqual([]);
  });
});
