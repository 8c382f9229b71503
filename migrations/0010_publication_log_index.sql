-- The transparency log index of each publication (docs/transparency-log.md), null until the
-- publication is appended; the scheduled backfill finds the unlogged ones by the partial index.
ALTER TABLE `publications` ADD `log_index` integer;--> statement-breakpoint
CREATE INDEX `publications_unlogged` ON `publications` (`seq`) WHERE `log_index` IS NULL;
