-- Lists at the cost of their query (docs/storage.md): each single list filter has an index that
-- ends in the list's order, so a page is a seek and a read of one page at any depth and size.
CREATE INDEX `passports_org_environment_created` ON `passports` (`organisation_id`,`environment`,`created_at`,`id`);
--> statement-breakpoint
CREATE INDEX `passports_org_lifecycle_created` ON `passports` (`organisation_id`,`lifecycle`,`created_at`,`id`);
--> statement-breakpoint
CREATE INDEX `passports_org_family_created` ON `passports` (`organisation_id`,`family`,`created_at`,`id`);
--> statement-breakpoint
-- Server-side search (GET /v1/passports?q=): one FTS5 row per passport, kept in step by the
-- triggers below. `scope` holds one token naming the organisation ('o' and the hex of its id), so
-- a search is answered inside one organisation; `terms` holds the identity id, display name,
-- environment, version and every binding value. A search reads the FTS rows in rowid order, and
-- rowid is the passport's `seq` here: a stable number in creation order (a passport's implicit
-- rowid could change on VACUUM, an INTEGER PRIMARY KEY cannot).
CREATE TABLE `passport_search_keys` (
  `seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
  `passport_id` text NOT NULL REFERENCES `passports`(`id`)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `passport_search_keys_passport` ON `passport_search_keys` (`passport_id`);
--> statement-breakpoint
CREATE VIRTUAL TABLE `passport_search` USING fts5(`scope`, `terms`, tokenize = 'unicode61', prefix = '1 2 3');
--> statement-breakpoint
INSERT INTO `passport_search_keys` (`passport_id`) SELECT `id` FROM `passports` ORDER BY `created_at`, `id`;
--> statement-breakpoint
INSERT INTO `passport_search` (`rowid`, `scope`, `terms`)
SELECT `k`.`seq`, 'o' || hex(`p`.`organisation_id`),
       `p`.`id` || ' ' || coalesce(`p`.`display_name`, '') || ' ' || coalesce(`p`.`environment`, '') || ' ' ||
       coalesce(`p`.`version`, '') || ' ' ||
       coalesce((SELECT group_concat(`b`.`value`, ' ') FROM `bindings` AS `b` WHERE `b`.`passport_id` = `p`.`id`), '')
FROM `passports` AS `p` JOIN `passport_search_keys` AS `k` ON `k`.`passport_id` = `p`.`id`;
--> statement-breakpoint
CREATE TRIGGER `passports_search_insert`
AFTER INSERT ON `passports`
FOR EACH ROW
BEGIN
  INSERT INTO `passport_search_keys` (`passport_id`) VALUES (NEW.`id`);
  INSERT INTO `passport_search` (`rowid`, `scope`, `terms`)
  SELECT `k`.`seq`, 'o' || hex(NEW.`organisation_id`),
         NEW.`id` || ' ' || coalesce(NEW.`display_name`, '') || ' ' || coalesce(NEW.`environment`, '') || ' ' ||
         coalesce(NEW.`version`, '')
  FROM `passport_search_keys` AS `k` WHERE `k`.`passport_id` = NEW.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `passports_search_update`
AFTER UPDATE OF `organisation_id`, `display_name`, `environment`, `version` ON `passports`
FOR EACH ROW
BEGIN
  DELETE FROM `passport_search` WHERE `rowid` = (SELECT `seq` FROM `passport_search_keys` WHERE `passport_id` = NEW.`id`);
  INSERT INTO `passport_search` (`rowid`, `scope`, `terms`)
  SELECT `k`.`seq`, 'o' || hex(NEW.`organisation_id`),
         NEW.`id` || ' ' || coalesce(NEW.`display_name`, '') || ' ' || coalesce(NEW.`environment`, '') || ' ' ||
         coalesce(NEW.`version`, '') || ' ' ||
         coalesce((SELECT group_concat(`b`.`value`, ' ') FROM `bindings` AS `b` WHERE `b`.`passport_id` = NEW.`id`), '')
  FROM `passport_search_keys` AS `k` WHERE `k`.`passport_id` = NEW.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `bindings_search_insert`
AFTER INSERT ON `bindings`
FOR EACH ROW
BEGIN
  DELETE FROM `passport_search` WHERE `rowid` = (SELECT `seq` FROM `passport_search_keys` WHERE `passport_id` = NEW.`passport_id`);
  INSERT INTO `passport_search` (`rowid`, `scope`, `terms`)
  SELECT `k`.`seq`, 'o' || hex(`p`.`organisation_id`),
         `p`.`id` || ' ' || coalesce(`p`.`display_name`, '') || ' ' || coalesce(`p`.`environment`, '') || ' ' ||
         coalesce(`p`.`version`, '') || ' ' ||
         coalesce((SELECT group_concat(`b`.`value`, ' ') FROM `bindings` AS `b` WHERE `b`.`passport_id` = `p`.`id`), '')
  FROM `passports` AS `p` JOIN `passport_search_keys` AS `k` ON `k`.`passport_id` = `p`.`id`
  WHERE `p`.`id` = NEW.`passport_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `bindings_search_delete`
AFTER DELETE ON `bindings`
FOR EACH ROW
BEGIN
  DELETE FROM `passport_search` WHERE `rowid` = (SELECT `seq` FROM `passport_search_keys` WHERE `passport_id` = OLD.`passport_id`);
  INSERT INTO `passport_search` (`rowid`, `scope`, `terms`)
  SELECT `k`.`seq`, 'o' || hex(`p`.`organisation_id`),
         `p`.`id` || ' ' || coalesce(`p`.`display_name`, '') || ' ' || coalesce(`p`.`environment`, '') || ' ' ||
         coalesce(`p`.`version`, '') || ' ' ||
         coalesce((SELECT group_concat(`b`.`value`, ' ') FROM `bindings` AS `b` WHERE `b`.`passport_id` = `p`.`id`), '')
  FROM `passports` AS `p` JOIN `passport_search_keys` AS `k` ON `k`.`passport_id` = `p`.`id`
  WHERE `p`.`id` = OLD.`passport_id`;
END;
--> statement-breakpoint
-- The duplicate refusal of migration 0007, same rule, with the join order fixed: SQLite chose to
-- walk every passport of the organisation and family (the index passports_org_*), so each binding
-- insert cost the organisation's size. CROSS JOIN keeps the order written: the passport by id, the
-- few bindings with this class and value (bindings_class_value), their passports by id.
DROP TRIGGER `bindings_refuse_duplicate_primary`;
--> statement-breakpoint
CREATE TRIGGER `bindings_refuse_duplicate_primary`
BEFORE INSERT ON `bindings`
FOR EACH ROW
WHEN EXISTS (
  SELECT 1
  FROM `passports` AS `me`
  CROSS JOIN `bindings` AS `held`
  CROSS JOIN `passports` AS `other`
  WHERE `me`.`id` = NEW.`passport_id`
    AND `me`.`distinct_reason` IS NULL
    AND NEW.`class` = CASE `me`.`family` WHEN 'api' THEN 'endpoint' ELSE 'manifest' END
    AND `held`.`class` = NEW.`class`
    AND `held`.`value` = NEW.`value`
    AND `other`.`id` = `held`.`passport_id`
    AND `other`.`id` <> `me`.`id`
    AND `other`.`organisation_id` = `me`.`organisation_id`
    AND `other`.`family` = `me`.`family`
    AND `other`.`lifecycle` <> 'retired'
)
BEGIN
  SELECT RAISE(ABORT, 'duplicate-identity');
END;
