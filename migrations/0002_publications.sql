CREATE TABLE `publications` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`passport_id` text NOT NULL,
	`record_version` integer NOT NULL,
	`digest` text NOT NULL,
	`previous_digest` text,
	`published_at` text NOT NULL,
	`change_kinds` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `publications_passport_version` ON `publications` (`passport_id`,`record_version`);