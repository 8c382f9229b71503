-- Reactivation re-evaluates (docs/lifecycle.md#re-evaluation): when the re-evaluation behind
-- `recheck_required` began, and an index for the scheduler to find the passports awaiting it.
ALTER TABLE `passports` ADD `recheck_since` text;--> statement-breakpoint
CREATE INDEX `passports_recheck` ON `passports` (`recheck_since`) WHERE "passports"."recheck_required" = 1;--> statement-breakpoint
-- Passports flagged before: their re-evaluation began at their last state change, and their proven
-- bindings are due for a check now.
UPDATE `passports` SET `recheck_since` = `state_as_of` WHERE `recheck_required` = 1;--> statement-breakpoint
UPDATE `bindings` SET `next_check_at` = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), `check_claim` = NULL
  WHERE `verification_state` IN ('verified', 'lapsed')
  AND `passport_id` IN (SELECT `id` FROM `passports` WHERE `recheck_required` = 1);
