import { describe, expect, it } from "vitest";
import {
  checkHistory,
  compareWithSeen,
  type HistoryEntryView,
  type PassportRecordView,
  PROPAGATION_WINDOW_SECONDS,
} from "../../packages/verifier/src/index.ts";

const publishedAt = "2026-01-01T00:00:00.000Z";
const published = Date.parse(publishedAt);
const record = {
  identity_id: "ip_test",
  record_version: 1,
  digest: "sha256:one",
  published_at: "2025-12-31T00:00:00.000Z",
} as PassportRecordView;
const seen = { record_version: 2, digest: "sha256:two", published_at: publishedAt };
const entries: HistoryEntryView[] = [
  {
    identity_id: "ip_test",
    record_version: 1,
    digest: "sha256:one",
    published_at: record.published_at as string,
    change_kinds: [],
    signature: "",
  },
  {
    identity_id: "ip_test",
    record_version: 2,
    digest: "sha256:two",
    previous_digest: "sha256:one",
    published_at: publishedAt,
    change_kinds: [],
    signature: "",
  },
];
const long = published + (PROPAGATION_WINDOW_SECONDS + 1) * 1000;

describe("proof checks against the clock", () => {
  it("an older version served after a newer one was seen is a rollback once the propagation window has passed", () => {
    expect(compareWithSeen(record, seen, long)).toMatchObject({ outcome: "history_broken", kind: "rollback" });
    expect(compareWithSeen(record, seen, published + 1000)).toMatchObject({ outcome: "stale" });
  });

  it("a history listing a newer version than the record served is a rollback once the window has passed", async () => {
    expect(await checkHistory(record, entries, undefined, [], long)).toMatchObject({
      outcome: "history_broken",
      kind: "rollback",
    });
    expect(await checkHistory(record, entries, undefined, [], published + 1000)).toMatchObject({ outcome: "stale" });
  });
});
