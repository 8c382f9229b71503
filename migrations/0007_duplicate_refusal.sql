-- Duplicate refusal (spec 1.6) held by the database: a primary binding (endpoint for API
-- passports, manifest for agent passports) may be held by only one operative passport of a family
-- in an organisation, unless the passport was declared a materially distinct object. The control
-- plane checks first to word the refusal; these triggers make the rule hold when two writes race.
CREATE TRIGGER `bindings_refuse_duplicate_primary`
BEFORE INSERT ON `bindings`
FOR EACH ROW
WHEN EXISTS (
  SELECT 1
  FROM `passports` AS `me`
  JOIN `passports` AS `other`
    ON `other`.`organisation_id` = `me`.`organisation_id`
   AND `other`.`family` = `me`.`family`
   AND `other`.`id` <> `me`.`id`
   AND `other`.`lifecycle` <> 'retired'
  JOIN `bindings` AS `held`
    ON `held`.`passport_id` = `other`.`id`
   AND `held`.`class` = NEW.`class`
   AND `held`.`value` = NEW.`value`
  WHERE `me`.`id` = NEW.`passport_id`
    AND `me`.`distinct_reason` IS NULL
    AND NEW.`class` = CASE `me`.`family` WHEN 'api' THEN 'endpoint' ELSE 'manifest' END
)
BEGIN
  SELECT RAISE(ABORT, 'duplicate-identity');
END;
--> statement-breakpoint
CREATE TRIGGER `passports_refuse_duplicate_primary_on_transfer`
BEFORE UPDATE OF `organisation_id` ON `passports`
FOR EACH ROW
WHEN NEW.`organisation_id` <> OLD.`organisation_id`
 AND NEW.`distinct_reason` IS NULL
 AND NEW.`lifecycle` <> 'retired'
 AND EXISTS (
  SELECT 1
  FROM `bindings` AS `mine`
  JOIN `bindings` AS `held`
    ON `held`.`class` = `mine`.`class`
   AND `held`.`value` = `mine`.`value`
  JOIN `passports` AS `other`
    ON `other`.`id` = `held`.`passport_id`
  WHERE `mine`.`passport_id` = NEW.`id`
    AND `mine`.`class` = CASE NEW.`family` WHEN 'api' THEN 'endpoint' ELSE 'manifest' END
    AND `other`.`id` <> NEW.`id`
    AND `other`.`organisation_id` = NEW.`organisation_id`
    AND `other`.`family` = NEW.`family`
    AND `other`.`lifecycle` <> 'retired'
)
BEGIN
  SELECT RAISE(ABORT, 'duplicate-identity');
END;
