-- The move fence (docs/sharding.md): while an organisation is being copied to another shard, its
-- row here makes these triggers refuse every insert and update of its rows in this shard, so a
-- write that found it here just before the move began cannot land after the copy. An empty table
-- is checked first, so the cost outside a move is one look at it.
CREATE TABLE `organisation_fences` (
	`organisation_id` text PRIMARY KEY NOT NULL,
	`fenced_at` text NOT NULL
);
--> statement-breakpoint
CREATE TRIGGER `organisations_fenced_insert`
BEFORE INSERT ON `organisations`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = NEW.`id`)
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `members_fenced_insert`
BEFORE INSERT ON `members`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = NEW.`organisation_id`)
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `organisation_events_fenced_insert`
BEFORE INSERT ON `organisation_events`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = NEW.`organisation_id`)
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `passports_fenced_insert`
BEFORE INSERT ON `passports`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = NEW.`organisation_id`)
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `events_fenced_insert`
BEFORE INSERT ON `events`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = NEW.`organisation_id`)
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `bindings_fenced_insert`
BEFORE INSERT ON `bindings`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = NEW.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `evidence_fenced_insert`
BEFORE INSERT ON `evidence`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = NEW.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `authority_fenced_insert`
BEFORE INSERT ON `authority`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = NEW.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `passport_uses_fenced_insert`
BEFORE INSERT ON `passport_uses`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = NEW.`agent_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `outbox_fenced_insert`
BEFORE INSERT ON `outbox`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = NEW.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `publications_fenced_insert`
BEFORE INSERT ON `publications`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = NEW.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `published_manifests_fenced_insert`
BEFORE INSERT ON `published_manifests`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = NEW.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `history_archives_fenced_insert`
BEFORE INSERT ON `history_archives`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = NEW.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `organisations_fenced_update`
BEFORE UPDATE ON `organisations`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = OLD.`id`)
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `members_fenced_update`
BEFORE UPDATE ON `members`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = OLD.`organisation_id`)
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `organisation_events_fenced_update`
BEFORE UPDATE ON `organisation_events`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = OLD.`organisation_id`)
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `passports_fenced_update`
BEFORE UPDATE ON `passports`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = OLD.`organisation_id`)
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `events_fenced_update`
BEFORE UPDATE ON `events`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = OLD.`organisation_id`)
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `bindings_fenced_update`
BEFORE UPDATE ON `bindings`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = OLD.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `evidence_fenced_update`
BEFORE UPDATE ON `evidence`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = OLD.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `authority_fenced_update`
BEFORE UPDATE ON `authority`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = OLD.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `passport_uses_fenced_update`
BEFORE UPDATE ON `passport_uses`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = OLD.`agent_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `outbox_fenced_update`
BEFORE UPDATE ON `outbox`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = OLD.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `publications_fenced_update`
BEFORE UPDATE ON `publications`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = OLD.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `published_manifests_fenced_update`
BEFORE UPDATE ON `published_manifests`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = OLD.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
--> statement-breakpoint
CREATE TRIGGER `history_archives_fenced_update`
BEFORE UPDATE ON `history_archives`
FOR EACH ROW
WHEN EXISTS (SELECT 1 FROM `organisation_fences`)
 AND EXISTS (SELECT 1 FROM `organisation_fences` WHERE `organisation_id` = (SELECT `organisation_id` FROM `passports` WHERE `id` = OLD.`passport_id`))
BEGIN
  SELECT RAISE(ABORT, 'organisation-moving');
END;
