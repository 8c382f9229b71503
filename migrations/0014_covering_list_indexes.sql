-- List pages read their rows from the index alone: each list index (0000, 0011) now also holds
-- every column a list item shows (listPageStatement's SUMMARY_SELECT), so a page is one index
-- range with no lookup into the passports table per row. At 100,000 passports those lookups put
-- the first and filtered pages at 0.77 of their floor; covered, 0.87 to 0.93
-- (scripts/bench/README.md). All four are covering: were only some, SQLite would serve a
-- lifecycle or family filter from the covering organisation index, testing every row of the
-- organisation, instead of seeking the filter's own index.
DROP INDEX `passports_org_created`;
--> statement-breakpoint
CREATE INDEX `passports_org_created` ON `passports` (`organisation_id`,`created_at`,`id`,`family`,`display_name`,`lifecycle`,`availability`,`environment`,`version`,`record_version`,`updated_at`);
--> statement-breakpoint
DROP INDEX `passports_org_environment_created`;
--> statement-breakpoint
CREATE INDEX `passports_org_environment_created` ON `passports` (`organisation_id`,`environment`,`created_at`,`id`,`family`,`display_name`,`lifecycle`,`availability`,`version`,`record_version`,`updated_at`);
--> statement-breakpoint
DROP INDEX `passports_org_lifecycle_created`;
--> statement-breakpoint
CREATE INDEX `passports_org_lifecycle_created` ON `passports` (`organisation_id`,`lifecycle`,`created_at`,`id`,`family`,`display_name`,`availability`,`environment`,`version`,`record_version`,`updated_at`);
--> statement-breakpoint
DROP INDEX `passports_org_family_created`;
--> statement-breakpoint
CREATE INDEX `passports_org_family_created` ON `passports` (`organisation_id`,`family`,`created_at`,`id`,`display_name`,`lifecycle`,`availability`,`environment`,`version`,`record_version`,`updated_at`);
