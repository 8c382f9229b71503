// The loop behind `npm run log-backfill` (docs/transparency-log.md, "Backfill"). The control plane's
// scheduled handler appends every publication without a log entry, oldest first (backfillLog in
// workers/control/src/publication/log/append.ts); this command waits until none is left, then republishes every
// passport (the republish loop, resumable by its cursor) so each snapshot's metadata carries its
// log index. Running it again appends nothing: a logged publication keeps its index.
import { UNLOGGED_PUBLICATIONS } from "../../workers/control/src/db/republish.ts";
import { type RepublishContext, republishAll } from "./republish.ts";

export async function logBackfill(ctx: RepublishContext): Promise<number> {
  for (;;) {
    const [row] = await ctx.query(UNLOGGED_PUBLICATIONS);
    const unlogged = Number(row?.unlogged ?? 0);
    if (unlogged === 0) break;
    ctx.log(`waiting: ${unlogged} publications not yet in the log`);
    await ctx.sleep(ctx.pollSeconds ?? 30);
  }
  ctx.log("every publication is in the log; republishing so each snapshot carries its log index");
  return republishAll(ctx);
}
