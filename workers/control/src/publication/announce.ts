import type { PublicationRow } from "./queries.ts";

/**
 * A publication as announced on the notifications queue (docs/events.md): which passport, which
 * version and digest, and the change kinds since the previous publication. The notifications wing
 * consumes it; the publication knows nothing of who subscribed.
 */
export interface PublicationAnnounced {
  kind: "publication";
  version: 1;
  passport_id: string;
  record_version: number;
  digest: string;
  previous_digest: string | null;
  published_at: string;
  change_kinds: string[];
}

/**
 * Announces a publication: one message whoever subscribed, so the fan-out's reads stay off the
 * publication's path. A failed send fails the publication, which the outbox then retries, so each
 * publication is announced at least once.
 */
export async function announcePublication(env: Env, publication: PublicationRow): Promise<void> {
  const message: PublicationAnnounced = {
    kind: "publication",
    version: 1,
    passport_id: publication.passportId,
    record_version: publication.recordVersion,
    digest: publication.digest,
    previous_digest: publication.previousDigest,
    published_at: publication.publishedAt,
    change_kinds: publication.changeKinds,
  };
  await env.NOTIFICATIONS.send(message);
}
