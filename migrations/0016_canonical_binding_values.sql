-- Binding values in their canonical form (docs/canonical-urls.md): the control plane now stores
-- every web URL canonicalised, so rows written before it are brought to the same form here, or
-- another spelling of them would skip the duplicate rule and conflict detection. SQL does what it
-- can do exactly for printable-ASCII http(s) and ws(s) values without user information or an IPv6
-- host: the fragment and an empty query are dropped, scheme and host lower-cased, the host's
-- trailing dot and the scheme's default port dropped, and an empty path written as '/'. A value
-- with a non-ASCII character (an internationalised host needs IDNA) is left as typed, and so is a
-- value whose canonical form the passport already binds, or binds under another spelling that
-- takes it (the unique index would refuse both).
UPDATE `bindings` SET `value` = `c`.`canonical`
FROM (
  WITH
    `web` AS (
      SELECT `id`, `value`,
             CASE WHEN instr(`value`, '#') > 0 THEN substr(`value`, 1, instr(`value`, '#') - 1) ELSE `value` END AS `v`
      FROM `bindings`
      WHERE `value` NOT GLOB '*[^!-~]*'
        AND (lower(substr(`value`, 1, 8)) = 'https://' OR lower(substr(`value`, 1, 7)) = 'http://'
             OR lower(substr(`value`, 1, 6)) = 'wss://' OR lower(substr(`value`, 1, 5)) = 'ws://')
    ),
    `split` AS (
      SELECT `id`, `value`, lower(substr(`v`, 1, instr(`v`, '://') - 1)) AS `scheme`,
             substr(`v`, instr(`v`, '://') + 3) AS `rest`
      FROM `web`
    ),
    `cut` AS (
      SELECT `id`, `value`, `scheme`, `rest`,
             CASE
               WHEN instr(`rest`, '/') = 0 AND instr(`rest`, '?') = 0 THEN length(`rest`) + 1
               WHEN instr(`rest`, '/') = 0 THEN instr(`rest`, '?')
               WHEN instr(`rest`, '?') = 0 THEN instr(`rest`, '/')
               ELSE min(instr(`rest`, '/'), instr(`rest`, '?'))
             END AS `at`
      FROM `split`
    ),
    `authority` AS (
      SELECT `id`, `value`, `scheme`, lower(substr(`rest`, 1, `at` - 1)) AS `auth`, substr(`rest`, `at`) AS `tail`
      FROM `cut`
    ),
    `host` AS (
      SELECT `id`, `value`, `scheme`, `tail`,
             CASE WHEN instr(`auth`, ':') > 0 THEN substr(`auth`, 1, instr(`auth`, ':') - 1) ELSE `auth` END AS `name`,
             CASE WHEN instr(`auth`, ':') > 0 THEN substr(`auth`, instr(`auth`, ':')) ELSE '' END AS `port`
      FROM `authority`
      WHERE instr(`auth`, '@') = 0 AND substr(`auth`, 1, 1) <> '['
    ),
    `joined` AS (
      SELECT `id`, `value`,
             `scheme` || '://' ||
             CASE WHEN `name` LIKE '%.' THEN substr(`name`, 1, length(`name`) - 1) ELSE `name` END ||
             CASE
               WHEN `port` = ':' THEN ''
               WHEN `port` = ':443' AND `scheme` IN ('https', 'wss') THEN ''
               WHEN `port` = ':80' AND `scheme` IN ('http', 'ws') THEN ''
               ELSE `port`
             END ||
             CASE WHEN `tail` = '' OR substr(`tail`, 1, 1) = '?' THEN '/' || `tail` ELSE `tail` END AS `j`,
             `name`
      FROM `host`
      WHERE `name` <> '' AND `name` <> '.' AND `name` NOT LIKE '%..%' AND `name` NOT LIKE '.%'
    ),
    `canonical` AS (
      SELECT `id`, CASE WHEN `j` LIKE '%?' THEN substr(`j`, 1, length(`j`) - 1) ELSE `j` END AS `canonical`
      FROM `joined`
    ),
    -- Of several spellings one passport binds, one takes the canonical form (the one already in it
    -- if there is one); the others stay as typed.
    `ranked` AS (
      SELECT `f`.`id`, `f`.`canonical`,
             row_number() OVER (
               PARTITION BY `b`.`passport_id`, `b`.`class`, `f`.`canonical`
               ORDER BY `f`.`canonical` = `b`.`value` DESC, `f`.`id`
             ) AS `n`
      FROM `canonical` AS `f` JOIN `bindings` AS `b` ON `b`.`id` = `f`.`id`
    )
  SELECT `id`, `canonical` FROM `ranked` WHERE `n` = 1
) AS `c`
WHERE `bindings`.`id` = `c`.`id`
  AND `c`.`canonical` <> `bindings`.`value`
  AND NOT EXISTS (
    SELECT 1 FROM `bindings` AS `same`
    WHERE `same`.`passport_id` = `bindings`.`passport_id`
      AND `same`.`class` = `bindings`.`class`
      AND `same`.`value` = `c`.`canonical`
  );
--> statement-breakpoint
-- The search rows hold binding values too; they are written again from the updated bindings.
DELETE FROM `passport_search`;
--> statement-breakpoint
INSERT INTO `passport_search` (`rowid`, `scope`, `terms`)
SELECT `k`.`seq`, 'o' || hex(`p`.`organisation_id`),
       `p`.`id` || ' ' || coalesce(`p`.`display_name`, '') || ' ' || coalesce(`p`.`environment`, '') || ' ' ||
       coalesce(`p`.`version`, '') || ' ' ||
       coalesce((SELECT group_concat(`b`.`value`, ' ') FROM `bindings` AS `b` WHERE `b`.`passport_id` = `p`.`id`), '')
FROM `passports` AS `p` JOIN `passport_search_keys` AS `k` ON `k`.`passport_id` = `p`.`id`;
