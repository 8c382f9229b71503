import { env } from "cloudflare:workers";
import {
  digestMatches,
  feedKey,
  historyPrefix,
  PassportRecord,
  type SignedHistoryEntry,
  type SnapshotMetadata,
  snapshotKey,
} from "@passport/domain";
import { describe, expect, it } from "vitest";
import { KeyRing, verifyDetachedJws } from "../../packages/verifier/src/index.ts";
import { Caller } from "../support/api.ts";
import { shardOfIdentity } from "../support/shards.ts";

const keys = () => new KeyRing(JSON.parse(env.TEST_SIGNING_JWKS));

async function snapshot(id: string) {
  const { value, metadata } = await env.SNAPSHOTS.getWithMetadata<SnapshotMetadata>(snapshotKey(id), "text");
  return { record: PassportRecord.parse(JSON.parse(value ?? "null")), metadata: metadata as SnapshotMetadata };
}

describe("signed publication", () => {
  it("signs every snapshot over its canonical JSON and chains it to the previous version", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    const first = await snapshot(id);
    expect(first.record.previous_digest).toBeUndefined();
    expect(await digestMatches(first.record)).toBe(true);
    expect(await verifyDetachedJws(first.metadata.signature ?? "", first.record, keys())).toMatchObject({
      valid: true,
    });

    await owner.json("PATCH", `/v1/passports/${id}`, { display_name: "Second" });
    const second = await snapshot(id);
    expect(second.record.previous_digest).toBe(first.record.digest);
    const tampered = { ...second.record, display_name: "Secone" };
    expect(await verifyDetachedJws(second.metadata.signature ?? "", tampered, keys())).toEqual({
      valid: false,
      reason: "mismatch",
      kid: JSON.parse(env.SIGNING_KEY).kid,
    });
    expect(
      (await verifyDetachedJws(second.metadata.signature ?? "", second.record, new KeyRing({ keys: [] }))).valid,
    ).toBe(false);
  });

  it("writes a signed history entry per published version and a feed entry per publication", async () => {
    const owner = await Caller.create("owner");
    const { identity_id: id } = await owner.createPassport();
    await owner.json("POST", `/v1/passports/${id}/bindings`, { class: "endpoint", value: "https://h.example.com/v1" });
    const { keys: listed } = await env.SNAPSHOTS.list<SignedHistoryEntry>({ prefix: historyPrefix(id) });
    const entries = listed.map((key) => key.metadata as SignedHistoryEntry);
    expect(entries.map((e) => [e.record_version, e.change_kinds])).toEqual([
      [1, ["passport.created"]],
      [2, ["binding.added"]],
    ]);
    expect(entries[1]?.previous_digest).toBe(entries[0]?.digest);
    for (const { signature, ...entry } of entries) {
      expect((await verifyDetachedJws(signature, entry, keys())).valid).toBe(true);
    }
    // A publication's feed position is its transparency-log index plus one (docs/signing.md).
    const publications = await (await shardOfIdentity(id))
      .prepare("SELECT log_index + 1 AS seq, record_version FROM publications WHERE passport_id = ? ORDER BY seq")
      .bind(id)
      .all<{ seq: number; record_version: number }>();
    expect(publications.results).toHaveLength(2);
    for (const { seq, record_version } of publications.results) {
      const feed = await env.SNAPSHOTS.get<{ identity_id: string; seq: number; record_version: number }>(
        feedKey(seq),
        "json",
      );
      expect(feed).toMatchObject({ identity_id: id, seq, record_version });
    }
  });
});
