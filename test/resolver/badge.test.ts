import { env, exports } from "cloudflare:workers";
import { identityCacheTag, mintIdentityId, snapshotKey } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { aggregate, publish } from "./support/records.ts";

const at = "2026-10-20T09:00:00.000Z";
const endpoint = (freshUntil: string) => ({
  class: "endpoint",
  value: "https://api.example.com/v1",
  label: null,
  boundAt: at,
  verificationState: "verified" as const,
  verificationMethod: "http_well_known" as const,
  verifiedAt: at,
  verificationFreshUntil: freshUntil,
  verificationEvidenceId: "ev_check",
});

function badge(id: string) {
  return exports.default.fetch(`https://resolver.test/api/p/${id}/badge.svg`);
}

/** The words the badge shows, from its accessible title. */
async function badgeText(response: Response): Promise<string> {
  const svg = await response.text();
  return /<title>([^<]*)<\/title>/.exec(svg)?.[1] ?? "";
}

describe("GET /api/p/{id}/badge.svg", () => {
  it("shows family, lifecycle state and whether the primary binding is verified, from the published snapshot", async () => {
    const verified = await publish(aggregate({ bindings: [endpoint("2099-01-01T00:00:00.000Z")] }));
    const response = await badge(verified.identity_id);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/svg+xml; charset=utf-8");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await badgeText(response)).toBe("API passport: active · verified");

    // A verified binding past its freshness counts as lapsed; a claimed one is not verified.
    const lapsed = await publish(aggregate({ bindings: [endpoint("2020-01-01T00:00:00.000Z")] }));
    expect(await badgeText(await badge(lapsed.identity_id))).toBe("API passport: active · not verified");
    const suspended = await publish(aggregate({ passport: { family: "agent", lifecycle: "suspended" }, bindings: [] }));
    expect(await badgeText(await badge(suspended.identity_id))).toBe("agent passport: suspended · not verified");
  });

  it("is cached like the record and carries the identity's Cache-Tag, so the publication's purge drops it", async () => {
    const record = await publish(aggregate());
    const [image, json] = await Promise.all([
      badge(record.identity_id),
      exports.default.fetch(`https://resolver.test/api/p/${record.identity_id}.json`),
    ]);
    for (const header of ["cache-tag", "cache-control", "cloudflare-cdn-cache-control"]) {
      expect(image.headers.get(header), header).toBe(json.headers.get(header));
    }
    expect(image.headers.get("cache-tag")).toBe(identityCacheTag(record.identity_id));
  });

  it("follows the snapshot: a new publication changes what it shows", async () => {
    const record = await publish(aggregate());
    expect(await badgeText(await badge(record.identity_id))).toContain("active");
    const revoked = JSON.parse(JSON.stringify(record));
    revoked.state.lifecycle = "revoked";
    await env.SNAPSHOTS.put(snapshotKey(record.identity_id), JSON.stringify(revoked));
    expect(await badgeText(await badge(record.identity_id))).toBe("API passport: revoked · not verified");
  });

  it("answers an unknown id with a not-found image and a malformed one with a 400 image", async () => {
    const unknown = mintIdentityId();
    const missing = await badge(unknown);
    expect(missing.status).toBe(404);
    expect(await badgeText(missing)).toBe("passport: not found");
    expect(missing.headers.get("cache-tag")).toBe(identityCacheTag(unknown));
    const malformed = await badge("psp_nope");
    expect(malformed.status).toBe(400);
    expect(await badgeText(malformed)).toBe("passport: malformed id");
  });
});
