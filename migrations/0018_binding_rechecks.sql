-- Scheduled re-checks per binding (docs/bindings.md, "Re-checks"; docs/scaling.md): when each
-- binding is next due, the scheduler's claim on its pending check, failures in a row (the backoff)
-- and the last few checks with their outcome and reason (shown in the Dashboard).
ALTER TABLE `bindings` ADD `next_check_at` text;--> statement-breakpoint
ALTER TABLE `bindings` ADD `check_claim` text;--> statement-breakpoint
ALTER TABLE `bindings` ADD `check_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `bindings` ADD `check_log` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
CREATE INDEX `bindings_next_check` ON `bindings` (`next_check_at`) WHERE "bindings"."next_check_at" IS NOT NULL;--> statement-breakpoint
-- Verified bindings fall due two days before their proof ends, as the old global queue took them;
-- lapsed ones, which the old re-check never retried, are due now.
UPDATE `bindings` SET `next_check_at` = strftime('%Y-%m-%dT%H:%M:%fZ', `verification_fresh_until`, '-2 days')
  WHERE `verification_state` = 'verified' AND `verification_fresh_until` IS NOT NULL;--> statement-breakpoint
UPDATE `bindings` SET `next_check_at` = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE `verification_state` = 'lapsed';
