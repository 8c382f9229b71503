import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import * as controlPlane from "../../workers/control/src/index.ts";
import { DurableObjectRequests } from "../../workers/platform-model/src/durable-objects.ts";
import * as modelledControlPlane from "../../workers/platform-model/src/entries/control.ts";
import { platformModel } from "../../workers/platform-model/src/model.ts";
import { Caller } from "../support/api.ts";

const modelled = env.TEST_PLATFORM_MODEL === "on";

describe("the Durable Objects model (docs/platform-model.md)", () => {
  it("runs every Durable Object class the control plane exports: the modelled entry exports each", () => {
    // A class missing here is missing under the model: its namespace answers "does not export".
    const classes = (module: object) =>
      Object.entries(module)
        .filter(([name, value]) => name !== "default" && typeof value === "function")
        .map(([name]) => name)
        .sort();
    expect(classes(modelledControlPlane)).toEqual(classes(controlPlane));
    expect(classes(controlPlane)).toContain("PurgeBudget");
  });

  it("counts requests per object per second and those over the soft limit, refusing none", () => {
    let now = 5_000;
    const requests = new DurableObjectRequests(() => now, 3);
    for (let i = 0; i < 5; i++) requests.note("busy");
    requests.note("quiet");
    expect(requests.counters()).toEqual({
      requests: 6,
      maxRequestsPerObjectPerSecond: 5,
      busiestObject: "busy",
      overSoftLimit: 2,
    });
    // A second later the object's window is empty again.
    now += 1000;
    requests.note("busy");
    expect(requests.counters()).toMatchObject({ requests: 7, overSoftLimit: 2 });
  });
});

describe.runIf(modelled)("the control plane's Durable Objects under the model", () => {
  afterEach(() => platformModel.reset());

  it("counts each request where the object runs, whichever Worker sent it", async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport();
    platformModel.reset();
    // Two status requests from the test, three through the resolver's status route.
    const sequencer = env.PUBLICATION_SEQUENCER.getByName(id);
    for (let i = 0; i < 2; i++) expect((await sequencer.status(id)).found).toBe(true);
    for (let i = 0; i < 3; i++) {
      expect((await env.TEST_RESOLVER.fetch(`http://resolver.test/api/p/${id}/status`)).status).toBe(200);
    }
    const counted = platformModel.counters().durableObjects;
    expect(counted.requests).toBe(5);
    expect(counted.busiestObject).toBe(id);
    expect(counted.maxRequestsPerObjectPerSecond).toBeGreaterThanOrEqual(1);
    expect(counted.overSoftLimit).toBe(0);
  });
});

describe("the model's clock", () => {
  afterEach(() => platformModel.setClock());

  it("runs in simulated time when given a clock", () => {
    let now = 0;
    platformModel.setClock(() => now);
    const key = `clock:${crypto.randomUUID()}`;
    platformModel.kv.admit("PUT", key);
    now = 999;
    expect(() => platformModel.kv.admit("PUT", key)).toThrow("429 Too Many Requests");
    now = 1000;
    platformModel.kv.admit("PUT", key);
  });
});
