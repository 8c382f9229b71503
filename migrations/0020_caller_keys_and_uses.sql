-- Reciprocal trust (docs/reciprocal-trust.md). Agent uses links: the API and MCP passports an agent
-- passport declares it calls, one row per link, listed per target for the API's declarer list and
-- its public count. At most 50 links per agent (MAX_USES_LINKS), held here so no two writers can
-- pass it together. And the public keys a signing_keys binding's directory held at its last
-- successful check (RFC 7638 thumbprints, never key material).
CREATE TABLE `passport_uses` (
	`agent_id` text NOT NULL,
	`target_id` text NOT NULL,
	`target_family` text NOT NULL,
	`declared_at` text NOT NULL,
	PRIMARY KEY(`agent_id`, `target_id`),
	FOREIGN KEY (`agent_id`) REFERENCES `passports`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`target_id`) REFERENCES `passports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `passport_uses_target` ON `passport_uses` (`target_id`,`declared_at`,`agent_id`);--> statement-breakpoint
CREATE TRIGGER `passport_uses_limit` BEFORE INSERT ON `passport_uses`
  WHEN (SELECT count(*) FROM `passport_uses` WHERE `agent_id` = NEW.`agent_id`) >= 50
  BEGIN SELECT RAISE(ABORT, 'passport_uses_limit'); END;--> statement-breakpoint
ALTER TABLE `bindings` ADD `observed_keys` text;
