import { env, exports } from "cloudflare:workers";
import { identityCacheTag, mintIdentityId } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { purgeIdentities } from "../../workers/resolver/src/edge-cache.ts";

/** Stands in for Workers Caching's `ctx.cache`, which local workerd does not provide. */
function recordingCache(result: CachePurgeResult) {
  const calls: CachePurgeOptions[] = [];
  const cache: CacheContext = {
    purge: async (options) => {
      calls.push(options);
      return result;
    },
    invalidate: async () => result,
  };
  return { cache, calls };
}

describe("purging one identity", () => {
  it("is reachable through the admin entry point the control plane binds to, and succeeds", async () => {
    // Through the deployable bundle: ResolverAdmin.purge -> RPC into the public entry point.
    await expect(env.TEST_RESOLVER_ADMIN.purge(mintIdentityId())).resolves.toEqual({ ok: true, value: undefined });
  });

  it("refuses anything but a well-formed identity id, as an answer rather than a thrown error", async () => {
    const answer = await env.TEST_RESOLVER_ADMIN.purge("passport-*");
    expect(answer).toEqual({ ok: false, error: expect.stringMatching(/well-formed identity id/) });
  });

  it("drops exactly the identity's Cache-Tag, the one its answers carry", async () => {
    const id = mintIdentityId();
    const { cache, calls } = recordingCache({ success: true, errors: [] });
    await purgeIdentities(cache, [id]);
    expect(calls).toEqual([{ tags: [identityCacheTag(id)] }]);
    const answer = await exports.default.fetch(`https://resolver.test/api/p/${id}.json`);
    expect(answer.headers.get("cache-tag")).toBe(identityCacheTag(id));
  });

  it("drops up to 100 identities in one call, and refuses more", async () => {
    const ids = Array.from({ length: 100 }, () => mintIdentityId());
    const { cache, calls } = recordingCache({ success: true, errors: [] });
    await purgeIdentities(cache, ids);
    expect(calls).toEqual([{ tags: ids.map(identityCacheTag) }]);
    await expect(purgeIdentities(cache, [...ids, mintIdentityId()])).rejects.toThrow(/at most 100/);
    expect(calls).toHaveLength(1);
  });

  it("throws when the platform refuses the purge, so the purge keeper keeps the identities and retries", async () => {
    const { cache } = recordingCache({ success: false, errors: [{ code: 1134, message: "rate limited" }] });
    await expect(purgeIdentities(cache, [mintIdentityId()])).rejects.toThrow(/refused \(1134: rate limited\)/);
  });

  it("has nothing to drop where the runtime keeps no edge cache", async () => {
    await expect(purgeIdentities(undefined, [mintIdentityId()])).resolves.toBeUndefined();
  });
});
