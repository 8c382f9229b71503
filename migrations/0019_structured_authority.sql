-- Structured authority (docs/authority.md) and per-binding context (docs/record-format.md).
-- An authority entry may now be structured: a resource, limits (an amount and currency, a rate)
-- and who granted it as the service checked it (kind, id, relationship, role) when it was written.
-- A grant is written with its kind computed in the statement from the granting member's role
-- (docs/authority.md): a role lost meanwhile leaves the kind NULL beside the id, which
-- `authority_grant_held` refuses, so the whole change rolls back.
-- Its free-text context becomes optional, so the table is rebuilt (SQLite cannot drop NOT NULL);
-- every existing entry is copied unchanged and stays a free-text entry. Nothing references this
-- table, so dropping the old one breaks no foreign key.
CREATE TABLE `__new_authority` (
	`id` text PRIMARY KEY NOT NULL,
	`passport_id` text NOT NULL,
	`action` text NOT NULL,
	`context` text,
	`granted_by` text,
	`expires_at` text,
	`resource` text,
	`amount_value` text,
	`amount_currency` text,
	`rate_count` integer,
	`rate_per` text,
	`granted_by_kind` text,
	`granted_by_id` text,
	`granted_by_relationship` text,
	`granted_by_role` text,
	`granted_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`passport_id`) REFERENCES `passports`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "authority_context_or_grant" CHECK("context" IS NOT NULL OR "granted_by_id" IS NOT NULL),
	CONSTRAINT "authority_grant_held" CHECK(("granted_by_kind" IS NULL) = ("granted_by_id" IS NULL))
);
--> statement-breakpoint
INSERT INTO `__new_authority`("id", "passport_id", "action", "context", "granted_by", "expires_at", "created_at")
  SELECT "id", "passport_id", "action", "context", "granted_by", "expires_at", "created_at" FROM `authority`;--> statement-breakpoint
DROP TABLE `authority`;--> statement-breakpoint
ALTER TABLE `__new_authority` RENAME TO `authority`;--> statement-breakpoint
CREATE INDEX `authority_passport` ON `authority` (`passport_id`);--> statement-breakpoint
-- The environment and version of one bound value (a staging endpoint under a production passport).
ALTER TABLE `bindings` ADD `environment` text;--> statement-breakpoint
ALTER TABLE `bindings` ADD `version` text;
