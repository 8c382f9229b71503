// The republish loop behind `npm run republish` (docs/deploy.md): pages through every passport in
// id order, putting each page into the publication outbox that the control plane's scheduled drain
// publishes through each passport's sequencer. Resumable: the cursor (the last id enqueued) is
// saved after every page. Rate-aware: the next page waits until the outbox backlog has drained
// below the low-water mark, so the drain, not this command, sets the pace.
import { enqueueRepublishPage, OUTBOX_BACKLOG } from "../../workers/control/src/db/republish.ts";

export type RepublishContext = {
  /** Runs one SQL statement against the environment's remote D1 and returns its result rows. */
  query: (sql: string) => Promise<Record<string, unknown>[]>;
  cursor: { read: () => string; write: (cursor: string) => void };
  sleep: (seconds: number) => Promise<void>;
  log: (line: string) => void;
  pageSize?: number;
  lowWater?: number;
  pollSeconds?: number;
};

export async function republishAll(ctx: RepublishContext): Promise<number> {
  const pageSize = ctx.pageSize ?? 200;
  const lowWater = ctx.lowWater ?? 100;
  let cursor = ctx.cursor.read();
  let enqueued = 0;
  if (cursor) ctx.log(`resuming after ${cursor}`);
  for (;;) {
    let backlog = await backlogOf(ctx);
    while (backlog > lowWater) {
      ctx.log(`waiting: ${backlog} publications still queued`);
      await ctx.sleep(ctx.pollSeconds ?? 30);
      backlog = await backlogOf(ctx);
    }
    const rows = await ctx.query(enqueueRepublishPage(cursor, pageSize));
    if (rows.length === 0) break;
    // SQLite and JavaScript order these ASCII ids the same way; the largest is where to resume.
    cursor =
      rows
        .map((row) => String(row.passport_id))
        .sort()
        .at(-1) ?? cursor;
    ctx.cursor.write(cursor);
    enqueued += rows.length;
    ctx.log(`enqueued ${enqueued} passports (up to ${cursor})`);
  }
  ctx.cursor.write("");
  ctx.log(`every passport is enqueued (${enqueued} in this run); the drain publishes what remains`);
  return enqueued;
}

async function backlogOf(ctx: RepublishContext): Promise<number> {
  const [row] = await ctx.query(OUTBOX_BACKLOG);
  return Number(row?.backlog ?? 0);
}
