-- Uses links across shards (docs/sharding.md): an agent declares the API passports it calls, of
-- any organisation, and another organisation's passport may live in another shard, where no
-- foreign key can reach it. The table is rebuilt without the foreign key on `target_id` (SQLite
-- cannot drop one), and keeps the target's family beside the link again (families never change),
-- so the agent's published record needs no other shard; `usesAddition` checks that the target
-- exists, through its own shard. Every link is copied with its target's family; nothing
-- references this table, so dropping the old one breaks no foreign key. Its index and triggers
-- (migration 0020's limit per agent, migration 0026's move fences) go with the old table and are
-- created again, unchanged.
CREATE TABLE `__new_passport_uses` (
	`agent_id` text NOT NULL,
	`target_id` text NOT NULL,
	`target_family` text NOT NULL,
	`declared_at` text NOT NULL,
	PRIMARY KEY(`agent_id`, `target_id`),
	FOREIGN KEY (`agent_id`) REFERENCES `passports`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_passport_uses`("agent_id", "target_id", "target_family", "declared_at")
  SELECT u."agent_id", u."target_id", p."family", u."declared_at"
  FROM `passport_uses` AS u JOIN `passports` AS p ON p."id" = u."target_id";--> statement-breakpoint
DROP TABLE `passport_uses`;--> statement-breakpoint
ALTER TABLE `__new_passport_uses` RENAME TO `passport_uses`;--> statement-breakpoint
CREATE INDEX `passport_uses_target` ON `passport_uses` (`target_id`,`declared_at`,`agent_id`);--> statement-breakpoint
CREATE TRIGGER `passport_uses_limit` BEFORE INSERT ON `passport_uses`
  WHEN (SELECT count(*) FROM `passport_uses` WHERE `agent_id` = NEW.`agent_id`) >= 50
  BEGIN SELECT RAISE(ABORT, 'passport_uses_limit'); END;--> statement-breakpoint
CREATE TRIGGER `passport_uses_fenced_insert`
BEFORE INSERT ON `passport_uses`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = NEW.`agent_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `passport_uses_fenced_update`
BEFORE UPDATE ON `passport_uses`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = OLD.`agent_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
