import { env, exports } from "cloudflare:workers";
import { mintIdentityId, snapshotKey } from "@passport/domain";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { aggregate, BASE, publish } from "./support/records.ts";
import { headersArbitrary, METHODS } from "./support/requests.ts";

async function allKeys(): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page: KVNamespaceListResult<unknown, string> = await env.SNAPSHOTS.list(cursor ? { cursor } : {});
    names.push(...page.keys.map((k) => k.name));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return names;
}

async function snapshotOf(id: string) {
  return env.SNAPSHOTS.getWithMetadata(snapshotKey(id), "text");
}

describe("the resolver cannot write", () => {
  it("leaves KV exactly as published after arbitrary requests of every method, bodies included", async () => {
    const published = await Promise.all([
      publish(aggregate()),
      publish(aggregate({ passport: { lifecycle: "retired" } })),
    ]);
    const ids = published.map((r) => r.identity_id);
    const unpublished = [mintIdentityId(), mintIdentityId()];
    const before = await Promise.all(ids.map(snapshotOf));
    const marker = `marker-${mintIdentityId()}`;

    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ids, ...unpublished),
        fc.constantFrom(...METHODS),
        fc.constantFrom("/api/p/{id}.json", "/p/{id}", "/api/p/{id}", "/{id}", `/${marker}/{id}`, "/health"),
        headersArbitrary(),
        async (id, method, template, headers) => {
          const hasBody = method !== "GET" && method !== "HEAD";
          const body = JSON.stringify({
            ...published[0],
            identity_id: id,
            display_name: marker,
            state: { lifecycle: "active" },
          });
          const response = await exports.default.fetch(`${BASE}${template.replace("{id}", id)}?note=${marker}`, {
            method,
            headers,
            body: hasBody ? body : undefined,
            redirect: "manual",
          });
          await response.arrayBuffer();
          expect(response.status).toBeLessThan(500);
        },
      ),
      { numRuns: 600 },
    );

    expect(await Promise.all(ids.map(snapshotOf))).toEqual(before);
    for (const id of unpublished) expect(await env.SNAPSHOTS.get(snapshotKey(id))).toBeNull();
    const keys = await allKeys();
    expect(keys.filter((key) => key.includes(marker) || unpublished.some((id) => key.includes(id)))).toEqual([]);
  }, 120_000);
});
