CREATE TABLE `authority` (
	`id` text PRIMARY KEY NOT NULL,
	`passport_id` text NOT NULL,
	`action` text NOT NULL,
	`context` text NOT NULL,
	`granted_by` text,
	`expires_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`passport_id`) REFERENCES `passports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `authority_passport` ON `authority` (`passport_id`);--> statement-breakpoint
CREATE TABLE `bindings` (
	`id` text PRIMARY KEY NOT NULL,
	`passport_id` text NOT NULL,
	`class` text NOT NULL,
	`value` text NOT NULL,
	`label` text,
	`bound_at` text NOT NULL,
	FOREIGN KEY (`passport_id`) REFERENCES `passports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `bindings_passport_class_value` ON `bindings` (`passport_id`,`class`,`value`);--> statement-breakpoint
CREATE INDEX `bindings_class_value` ON `bindings` (`class`,`value`);--> statement-breakpoint
CREATE TABLE `events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`passport_id` text NOT NULL,
	`organisation_id` text NOT NULL,
	`actor` text NOT NULL,
	`at` text NOT NULL,
	`kind` text NOT NULL,
	`detail` text NOT NULL,
	`record_version` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_passport_version` ON `events` (`passport_id`,`record_version`);--> statement-breakpoint
CREATE TABLE `evidence` (
	`id` text PRIMARY KEY NOT NULL,
	`passport_id` text NOT NULL,
	`claim` text NOT NULL,
	`source` text NOT NULL,
	`scope` text NOT NULL,
	`reference` text,
	`observed_at` text NOT NULL,
	`fresh_until` text,
	`withdrawn_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`passport_id`) REFERENCES `passports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `evidence_passport` ON `evidence` (`passport_id`);--> statement-breakpoint
CREATE TABLE `members` (
	`organisation_id` text NOT NULL,
	`subject` text NOT NULL,
	`role` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`organisation_id`, `subject`),
	FOREIGN KEY (`organisation_id`) REFERENCES `organisations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `members_subject` ON `members` (`subject`);--> statement-breakpoint
CREATE TABLE `organisations` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`parent_id` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`parent_id`) REFERENCES `organisations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `outbox` (
	`passport_id` text PRIMARY KEY NOT NULL,
	`record_version` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text NOT NULL,
	`last_error` text
);
--> statement-breakpoint
CREATE TABLE `passports` (
	`id` text PRIMARY KEY NOT NULL,
	`organisation_id` text NOT NULL,
	`family` text NOT NULL,
	`display_name` text,
	`relationship` text DEFAULT 'responsible' NOT NULL,
	`lifecycle` text DEFAULT 'active' NOT NULL,
	`availability` text,
	`environment` text,
	`version` text,
	`state_as_of` text NOT NULL,
	`recheck_required` integer DEFAULT false NOT NULL,
	`duplicate_of` text,
	`distinct_reason` text,
	`record_version` integer DEFAULT 1 NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`organisation_id`) REFERENCES `organisations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `passports_org_created` ON `passports` (`organisation_id`,`created_at`,`id`);