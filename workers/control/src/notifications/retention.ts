import type { Database } from "../db/client.ts";
import { deleteSettledDeliveries } from "./queries.ts";

/**
 * How long a settled delivery stays in its subscription's attempts log: long enough to look into
 * a failure reported days later, short enough that D1 holds about two weeks of deliveries.
 */
const DELIVERY_RETENTION_DAYS = 14;

/**
 * One retention pass (the control plane's cron, every minute): removes the oldest deliveries
 * settled more than DELIVERY_RETENTION_DAYS ago, at most a thousand a run (1.4 million a day).
 */
export function forgetSettledDeliveries(db: Database, now: Date): Promise<void> {
  return deleteSettledDeliveries(db, new Date(now.getTime() - DELIVERY_RETENTION_DAYS * 86_400_000).toISOString());
}
