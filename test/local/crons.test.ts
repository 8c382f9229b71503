// Cron triggers under `npm start` (docs/platform-model.md, Cron triggers), tried as a newcomer
// would: suspending and reactivating the demo agent, as the README suggests, returns its agent
// envelope to `current` once the scheduled re-checks ran, without touching the state directory;
// and "Re-check now" (202) leads to a check that actually runs.
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceInfo, startService, stopService } from "../local-service.ts";

/** The demo agent's manifest (scripts/dev.mjs, DEMO_MANIFEST), the README's envelope target. */
const DEMO_MANIFEST = "https://agents.demo.example/support/agent-card.json";
/** The bound: back to current within 3 minutes of the reactivation. */
const BOUND_MS = 180_000;

let service: { info: ServiceInfo; child: ChildProcess } | undefined;

beforeAll(async () => {
  service = await startService();
});
afterAll(async () => {
  if (service) await stopService(service.child);
});

type Envelope = { posture: string; result: string };
type Binding = { id: string; class: string; last_check: { at: string } | null };

async function api<T>(method: string, path: string, body?: unknown, expected = 200): Promise<T> {
  const { info } = service as { info: ServiceInfo };
  const response = await fetch(`${info.control}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${info.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** How long the local edge may serve an envelope a publication superseded: its 30 s lifetime and the keeper's delay. */
const EDGE_BOUND_MS = 45_000;

async function envelope(): Promise<Envelope> {
  const { info } = service as { info: ServiceInfo };
  const response = await fetch(`${info.resolver}/api/agent-envelope?target=${encodeURIComponent(DEMO_MANIFEST)}`);
  return (await response.json()) as Envelope;
}

describe("cron triggers under npm start", () => {
  it("a suspended and reactivated demo agent is current again within 3 minutes; Re-check now (202) runs a check", async () => {
    const { info } = service as { info: ServiceInfo };
    const agent = info.demo.find((p) => p.family === "agent")?.id as string;
    expect(await envelope()).toMatchObject({ posture: "current" });

    await api("PATCH", `/v1/passports/${agent}/state`, { lifecycle: "suspended", reason: "newcomer tries it" });
    // The resolver's port is the platform model's edge: an envelope it holds changes once the purge
    // keeper drops it (at once for a suspension, within a second or so for a reactivation when the
    // budget allows), at the latest after the edge lifetime (docs/freshness.md).
    await expect
      .poll(envelope, { timeout: EDGE_BOUND_MS, interval: 500 })
      .toMatchObject({ posture: "needs_repair", result: "lifecycle_suspended" });
    const reactivated = Date.now();
    const view = await api<{ state: { recheck_required?: boolean } }>("PATCH", `/v1/passports/${agent}/state`, {
      lifecycle: "active",
    });
    expect(view.state.recheck_required).toBe(true);
    await expect
      .poll(envelope, { timeout: EDGE_BOUND_MS, interval: 500 })
      .toMatchObject({ posture: "incomplete", result: "recheck_required" });
    // The Dashboard's "Re-check now": accepted, and followed by a check that runs (below).
    await api("POST", `/v1/passports/${agent}/recheck`, undefined, 202);

    let last: Envelope | undefined;
    while (Date.now() - reactivated < BOUND_MS) {
      last = await envelope();
      if (last.posture === "current") break;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
    const tookMs = Date.now() - reactivated;
    console.log(`demo agent current again ${(tookMs / 1000).toFixed(1)} s after its reactivation`);
    expect(last).toMatchObject({ posture: "current" });
    expect(tookMs).toBeLessThan(BOUND_MS);

    // The bindings were checked by the service after the reactivation: scheduled checks, not the start's.
    const passport = await api<{ bindings: Binding[] }>("GET", `/v1/passports/${agent}`);
    for (const binding of passport.bindings) {
      expect(Date.parse(binding.last_check?.at ?? "")).toBeGreaterThanOrEqual(reactivated - 1000);
    }
  }, 300_000);
});
