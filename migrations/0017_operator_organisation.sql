ALTER TABLE `passports` ADD `operator_organisation_id` text REFERENCES organisations(id);--> statement-breakpoint
CREATE INDEX `passports_operator` ON `passports` (`operator_organisation_id`);