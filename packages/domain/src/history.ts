import { z } from "zod";

const Digest = z.string().regex(/^sha-256:[A-Za-z0-9_-]{43}$/);

/** One published version of one passport, as listed in its history (docs/signing.md). */
export const HistoryEntry = z
  .object({
    identity_id: z.string(),
    record_version: z.int().min(1),
    digest: Digest,
    previous_digest: Digest.optional(),
    published_at: z.string(),
    change_kinds: z.array(z.string()),
  })
  .strict();
export type HistoryEntry = z.infer<typeof HistoryEntry>;

/** A history entry with its detached JWS over the entry's RFC 8785 canonical JSON. */
export const SignedHistoryEntry = HistoryEntry.extend({ signature: z.string() });
export type SignedHistoryEntry = z.infer<typeof SignedHistoryEntry>;

/** One publication in the global change feed: nothing the published records do not already show. */
export const FeedEntry = z
  .object({
    seq: z.int().min(1),
    identity_id: z.string(),
    record_version: z.int().min(1),
    digest: Digest,
    published_at: z.string(),
  })
  .strict();
export type FeedEntry = z.infer<typeof FeedEntry>;
