-- Asserted evidence is trusted only when a source the operator configured signed it
-- (docs/evidence-attestation.md). Before this, trust was decided by the source name a member typed,
-- so every item marked trusted that way is re-marked untrusted, and each passport whose current
-- record showed such an item gets its next record version (a history event and an outbox row, as an
-- organisation change does) so the resolver stops serving it as trusted.
ALTER TABLE `evidence` ADD `attested_key_id` text;
--> statement-breakpoint
ALTER TABLE `evidence` ADD `attestation` text;
--> statement-breakpoint
INSERT INTO `events` (`passport_id`, `organisation_id`, `actor`, `at`, `kind`, `detail`, `record_version`)
SELECT `id`, `organisation_id`, 'passport-service', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'evidence.trust_withdrawn',
  json_object(
    'evidence_ids', (SELECT json_group_array(`e`.`id`) FROM `evidence` `e`
      WHERE `e`.`passport_id` = `passports`.`id` AND `e`.`trusted_source` = 1 AND `e`.`withdrawn_at` IS NULL),
    'reason', 'trusted only when its source attests it; a typed source name no longer counts'
  ),
  `record_version` + 1
FROM `passports`
WHERE `id` IN (SELECT `passport_id` FROM `evidence` WHERE `trusted_source` = 1 AND `withdrawn_at` IS NULL);
--> statement-breakpoint
INSERT INTO `outbox` (`passport_id`, `record_version`, `attempts`, `next_attempt_at`, `bulk`)
SELECT `id`, `record_version` + 1, 0, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 1
FROM `passports`
WHERE `id` IN (SELECT `passport_id` FROM `evidence` WHERE `trusted_source` = 1 AND `withdrawn_at` IS NULL)
ON CONFLICT (`passport_id`) DO UPDATE SET `record_version` = `excluded`.`record_version`,
  `attempts` = 0, `next_attempt_at` = `excluded`.`next_attempt_at`, `bulk` = min(`outbox`.`bulk`, `excluded`.`bulk`);
--> statement-breakpoint
UPDATE `passports` SET `record_version` = `record_version` + 1, `updated_at` = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE `id` IN (SELECT `passport_id` FROM `evidence` WHERE `trusted_source` = 1 AND `withdrawn_at` IS NULL);
--> statement-breakpoint
UPDATE `evidence` SET `trusted_source` = 0 WHERE `trusted_source` = 1;
