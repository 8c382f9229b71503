-- The model an agent passport runs (spec 1.1; docs/record-format.md, "Model"): context around the
-- persistent identity, published as state.model. Provider and name are set and cleared together.
ALTER TABLE `passports` ADD `model_provider` text;--> statement-breakpoint
ALTER TABLE `passports` ADD `model_name` text;--> statement-breakpoint
ALTER TABLE `passports` ADD `model_version` text;