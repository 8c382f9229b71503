-- 0000_init once created a plain index `events_passport` on (passport_id, seq); it was later edited
-- in place to the unique `events_passport_version`, so databases created before the edit never got
-- it. This brings both kinds of database to the same end state. If an old database already holds two
-- events for one (passport_id, record_version), the CREATE fails and the migration is not applied:
-- history is never deleted silently (docs/storage.md, "Migrations").
DROP INDEX IF EXISTS `events_passport`;--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS `events_passport_version` ON `events` (`passport_id`,`record_version`);
