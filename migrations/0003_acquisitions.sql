CREATE TABLE `acquisition_stages` (
	`acquisition_id` text NOT NULL,
	`stage` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 1 NOT NULL,
	`outcome` text,
	`error_code` text,
	`error_message` text,
	`started_at` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`acquisition_id`, `stage`),
	FOREIGN KEY (`acquisition_id`) REFERENCES `acquisitions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `acquisitions` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`status` text NOT NULL,
	`offer_type` text,
	`aws_account_id` text,
	`license_arn` text,
	`customer_identifier` text,
	`product_code` text,
	`family` text,
	`marketplace_customer_id` text,
	`marketplace_account_id` text,
	`account_outcome` text,
	`passport_id` text,
	`passport_outcome` text,
	`failed_stage` text,
	`error_code` text,
	`error_message` text,
	`claim_hash` text,
	`claim_expires_at` text,
	`claimed_by` text,
	`claimed_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`marketplace_customer_id`) REFERENCES `marketplace_customers`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`marketplace_account_id`) REFERENCES `marketplace_accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`passport_id`) REFERENCES `passports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `acquisitions_token_hash` ON `acquisitions` (`token_hash`);--> statement-breakpoint
CREATE INDEX `acquisitions_account` ON `acquisitions` (`aws_account_id`);--> statement-breakpoint
CREATE TABLE `marketplace_account_passports` (
	`marketplace_account_id` text NOT NULL,
	`family` text NOT NULL,
	`passport_id` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`marketplace_account_id`, `family`),
	FOREIGN KEY (`marketplace_account_id`) REFERENCES `marketplace_accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`passport_id`) REFERENCES `passports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `marketplace_account_passports_passport_id_unique` ON `marketplace_account_passports` (`passport_id`);--> statement-breakpoint
CREATE TABLE `marketplace_accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`customer_key` text NOT NULL,
	`aws_account_id` text,
	`organisation_id` text NOT NULL,
	`parent_organisation_id` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`organisation_id`) REFERENCES `organisations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`parent_organisation_id`) REFERENCES `organisations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `marketplace_accounts_customer_key_unique` ON `marketplace_accounts` (`customer_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `marketplace_accounts_organisation_id_unique` ON `marketplace_accounts` (`organisation_id`);--> statement-breakpoint
CREATE TABLE `marketplace_customers` (
	`id` text PRIMARY KEY NOT NULL,
	`customer_key` text NOT NULL,
	`marketplace_account_id` text,
	`aws_account_id` text,
	`license_arn` text,
	`customer_identifier` text,
	`product_code` text,
	`agreement_id` text,
	`status` text NOT NULL,
	`status_at` text NOT NULL,
	`last_event` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`marketplace_account_id`) REFERENCES `marketplace_accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `marketplace_customers_customer_key_unique` ON `marketplace_customers` (`customer_key`);--> statement-breakpoint
CREATE INDEX `marketplace_customers_account` ON `marketplace_customers` (`aws_account_id`);--> statement-breakpoint
CREATE TABLE `marketplace_events` (
	`event_id` text PRIMARY KEY NOT NULL,
	`format` text NOT NULL,
	`kind` text NOT NULL,
	`customer_key` text,
	`occurred_at` text NOT NULL,
	`outcome` text NOT NULL,
	`received_at` text NOT NULL
);
