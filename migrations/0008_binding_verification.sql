ALTER TABLE `bindings` ADD `verification_state` text DEFAULT 'claimed' NOT NULL CHECK (`verification_state` IN ('claimed', 'verified', 'lapsed'));--> statement-breakpoint
ALTER TABLE `bindings` ADD `verification_method` text;--> statement-breakpoint
ALTER TABLE `bindings` ADD `verified_at` text;--> statement-breakpoint
ALTER TABLE `bindings` ADD `verification_fresh_until` text;--> statement-breakpoint
ALTER TABLE `bindings` ADD `verification_evidence_id` text;--> statement-breakpoint
ALTER TABLE `bindings` ADD `lapsed_at` text;--> statement-breakpoint
ALTER TABLE `bindings` ADD `lapse_reason` text;--> statement-breakpoint
ALTER TABLE `bindings` ADD `last_checked_at` text;--> statement-breakpoint
ALTER TABLE `bindings` ADD `last_check_result` text;--> statement-breakpoint
ALTER TABLE `bindings` ADD `challenge` text;--> statement-breakpoint
CREATE INDEX `bindings_verification_due` ON `bindings` (`verification_state`,`verification_fresh_until`);--> statement-breakpoint
ALTER TABLE `evidence` ADD `basis` text DEFAULT 'asserted' NOT NULL CHECK (`basis` IN ('observed', 'asserted'));--> statement-breakpoint
ALTER TABLE `evidence` ADD `trusted_source` integer DEFAULT false NOT NULL;
