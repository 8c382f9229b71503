import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { PurgeBudget } from "../../workers/control/src/publication/purge-budget.ts";
import { Caller } from "../support/api.ts";

/**
 * The whole path under the platform model (docs/platform-model.md): the control plane publishes,
 * the purge keeper purges through the resolver, and the resolver's public answers come through the
 * model's Workers Caching. Every test file's publications spend the model's one purge budget, as
 * every publication of a deployment spends the platform's, so this test waits for a token.
 */
const keeper = () => env.PURGE_BUDGET.getByName("purges");
const edgePurge = env.TEST_EDGE_PURGE as unknown as { counters(): Promise<{ purgeTokens: number }> };

async function read(id: string) {
  const response = await env.TEST_EDGE.fetch(`http://resolver.test/api/p/${id}.json`);
  const record = (await response.json()) as { record_version: number; state: { lifecycle: string } };
  return { cache: response.headers.get("cf-cache-status"), tag: response.headers.get("cache-tag"), record };
}

/** Runs the keeper until it has nothing due now, waiting for the model's budget when it is spent. */
async function purgeNow(): Promise<void> {
  const deadline = Date.now() + 40_000;
  for (;;) {
    while ((await edgePurge.counters()).purgeTokens < 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const state = await runInDurableObject(keeper(), async (instance: PurgeBudget, storage) => {
      // A refusal emptied the keeper's bucket; the model has a token again, so try at once.
      storage.storage.sql.exec("DELETE FROM purge_bucket");
      await instance.flush();
      return instance.state();
    });
    if (state.queued.security + state.queued.routine === 0 || Date.now() > deadline) return;
  }
}

describe("a record through the platform model's edge", () => {
  it("answers HIT the second time, and the revoked record once the keeper purged it", { timeout: 60_000 }, async () => {
    const admin = await Caller.create("admin");
    const { identity_id: id } = await admin.createPassport();
    const first = await read(id);
    expect(first.cache).toBe("MISS");
    expect(first.tag).toBeNull();
    expect(first.record.record_version).toBe(1);
    const second = await read(id);
    expect(second.cache).toBe("HIT");
    expect(second.record.record_version).toBe(1);

    const revoked = await admin.json<{ publication: { status: string } }>("PATCH", `/v1/passports/${id}/state`, {
      lifecycle: "revoked",
    });
    // Published before any purge: the publication does not wait on the edge's budget.
    expect(revoked.publication.status).toBe("published");
    await purgeNow();
    const after = await read(id);
    expect(after.cache).toBe("MISS");
    expect(after.record).toMatchObject({ record_version: 2, state: { lifecycle: "revoked" } });
  });
});
