-- What happened to an organisation itself (renamed, parent changed, recovered), with who did it.
-- Passport changes stay in `events`; this is the organisation's own history (spec 2.1, 5.2).
CREATE TABLE `organisation_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organisation_id` text NOT NULL,
	`actor` text NOT NULL,
	`at` text NOT NULL,
	`kind` text NOT NULL,
	`detail` text NOT NULL,
	FOREIGN KEY (`organisation_id`) REFERENCES `organisations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `organisation_events_organisation` ON `organisation_events` (`organisation_id`,`seq`);
