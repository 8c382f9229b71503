-- History older than the archive window leaves D1 (docs/storage.md, "History archive"): the parts
-- moved to KV, and where the archiving pass goes on in `events`.
CREATE TABLE `history_archive_cursor` (
	`id` integer PRIMARY KEY NOT NULL,
	`after_seq` integer NOT NULL,
	CONSTRAINT "history_archive_cursor_one" CHECK("history_archive_cursor"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE `history_archives` (
	`passport_id` text NOT NULL,
	`first_seq` integer NOT NULL,
	`last_seq` integer NOT NULL,
	`publications_first_seq` integer,
	`publications_last_seq` integer,
	`key` text NOT NULL,
	`written_at` text NOT NULL,
	`sealed_at` text,
	PRIMARY KEY(`passport_id`, `first_seq`)
);
--> statement-breakpoint
CREATE INDEX `history_archives_unsealed` ON `history_archives` (`written_at`) WHERE "history_archives"."sealed_at" IS NULL;