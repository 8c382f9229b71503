CREATE TABLE `published_manifests` (
	`passport_id` text NOT NULL,
	`manifest_key` text NOT NULL,
	PRIMARY KEY(`passport_id`, `manifest_key`)
);
