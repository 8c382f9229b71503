-- Reads of one organisation's marketplace history (GET /v1/organisations/{id}/subscriptions):
-- its agreements' events by customer key and its acquisitions by marketplace account, each an
-- index range instead of a scan of every customer's events and handoffs.
CREATE INDEX `marketplace_events_customer` ON `marketplace_events` (`customer_key`,`occurred_at`);
--> statement-breakpoint
CREATE INDEX `acquisitions_marketplace_account` ON `acquisitions` (`marketplace_account_id`,`created_at`);
--> statement-breakpoint
CREATE INDEX `marketplace_customers_marketplace_account` ON `marketplace_customers` (`marketplace_account_id`);
