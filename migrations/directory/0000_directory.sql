-- The directory database (docs/sharding.md): where each organisation's data lives, which
-- organisation each identity id belongs to, and the cross-organisation index of primary binding
-- values (by SHA-256 of class and canonical value; no tenant value is stored here). Its own
-- migrations; every shard runs migrations/ instead.
CREATE TABLE `organisation_shards` (
	`organisation_id` text PRIMARY KEY NOT NULL,
	`shard` integer NOT NULL,
	-- Set while the organisation is fenced for a move to that shard: its writes are refused.
	`moving_to` integer,
	`placed_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `identity_organisations` (
	`identity_id` text PRIMARY KEY NOT NULL,
	`organisation_id` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `identity_organisations_organisation` ON `identity_organisations` (`organisation_id`);
--> statement-breakpoint
-- A passport's proof of a primary binding value, while it is verified (two organisations may
-- both prove one value: the genuine conflict of docs/bindings.md).
CREATE TABLE `proven_bindings` (
	`value_key` text NOT NULL,
	`identity_id` text NOT NULL,
	`organisation_id` text NOT NULL,
	`fresh_until` text NOT NULL,
	PRIMARY KEY (`value_key`, `identity_id`)
);
--> statement-breakpoint
-- A passport's claim of a primary binding value, recorded only while no other organisation holds
-- a fresh proof of it (one conditional statement, db/directory.ts).
CREATE TABLE `binding_claims` (
	`value_key` text NOT NULL,
	`identity_id` text NOT NULL,
	`organisation_id` text NOT NULL,
	`claimed_at` text NOT NULL,
	PRIMARY KEY (`value_key`, `identity_id`)
);
