-- Publications owed because an organisation changed (a rename or a move gives every record of its
-- passports a new version at once) are drained after every other due publication, so a backlog of
-- thousands never holds back a revocation whose publication failed in its request. The drain reads
-- due rows by (bulk, next_attempt_at) through the index instead of sorting the whole outbox.
ALTER TABLE `outbox` ADD `bulk` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
CREATE INDEX `outbox_due` ON `outbox` (`bulk`,`next_attempt_at`);
