import type { PublicationAnnounced } from "./messages.ts";

/** A publication as the publication wing records it (publications table). */
export interface Publication {
  passportId: string;
  recordVersion: number;
  digest: string;
  previousDigest: string | null;
  publishedAt: string;
  changeKinds: string[];
}

/**
 * Announces a publication on the notifications queue, whose consumer finds the subscriptions it
 * concerns (docs/events.md). One message per publication whoever subscribed: the fan-out's reads
 * stay off the publication's path. A failed send fails the publication, which the outbox then
 * retries, so a publication is announced at least once.
 */
export async function announcePublication(env: Env, publication: Publication): Promise<void> {
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
