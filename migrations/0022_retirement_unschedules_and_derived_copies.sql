-- Retiring a passport takes its bindings off the re-check schedule in its own batch (docs/bindings.md,
-- "Freshness and re-checks"), so the scheduler no longer looks for retired passports each run; the
-- bindings of passports retired before are taken off it here.
UPDATE `bindings` SET `next_check_at` = NULL, `check_claim` = NULL
  WHERE `next_check_at` IS NOT NULL
  AND `passport_id` IN (SELECT `id` FROM `passports` WHERE `lifecycle` = 'retired');--> statement-breakpoint
-- Only the duplicate-holder read chose it, and there it walked every verified binding instead of the
-- few with the value (bindings_class_value).
DROP INDEX `bindings_verification_due`;--> statement-breakpoint
-- A link's target family is its passport's (families never change): read through the join.
ALTER TABLE `passport_uses` DROP COLUMN `target_family`;
