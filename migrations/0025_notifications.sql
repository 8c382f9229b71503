-- Change notifications (docs/events.md): confirmed subscriptions of HTTPS endpoints to passports or
-- organisations, the deliveries owed to them, and each delivery's attempts log.
CREATE TABLE `notification_attempts` (
	`delivery_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`at` text NOT NULL,
	`status` integer,
	`outcome` text NOT NULL,
	`reason` text,
	`duration_ms` integer,
	PRIMARY KEY(`delivery_id`, `attempt`),
	FOREIGN KEY (`delivery_id`) REFERENCES `notification_deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `notification_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`subscription_id` text NOT NULL,
	`passport_id` text NOT NULL,
	`record_version` integer NOT NULL,
	`digest` text NOT NULL,
	`previous_digest` text,
	`published_at` text NOT NULL,
	`change_kinds` text NOT NULL,
	`event_kinds` text NOT NULL,
	`state` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`settled_at` text,
	FOREIGN KEY (`subscription_id`) REFERENCES `notification_subscriptions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notification_deliveries_subscription` ON `notification_deliveries` (`subscription_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `notification_deliveries_settled` ON `notification_deliveries` (`settled_at`) WHERE "notification_deliveries"."settled_at" IS NOT NULL;--> statement-breakpoint
CREATE TABLE `notification_subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`subscriber` text NOT NULL,
	`endpoint_url` text NOT NULL,
	`endpoint_host` text NOT NULL,
	`target_kind` text NOT NULL,
	`target_id` text NOT NULL,
	`event_kinds` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`confirmed_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_subscriptions_unique` ON `notification_subscriptions` (`subscriber`,`endpoint_url`,`target_kind`,`target_id`);--> statement-breakpoint
CREATE INDEX `notification_subscriptions_target` ON `notification_subscriptions` (`target_kind`,`target_id`);--> statement-breakpoint
CREATE INDEX `notification_subscriptions_host` ON `notification_subscriptions` (`endpoint_host`);