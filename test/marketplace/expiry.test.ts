import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { database } from "../../workers/control/src/db/client.ts";
import worker from "../../workers/control/src/index.ts";
import { deleteExpiredAcquisitions } from "../../workers/control/src/marketplace/queries/expiry.ts";
import { developmentToken } from "../support/tokens.ts";
import { claim, deliver, freshAccountId, handoff, holdingsOf, subscribe } from "./support.ts";

async function acquisitionFor(options: Parameters<typeof subscribe>[0] = {}) {
  const account = freshAccountId();
  const registration = await subscribe({ customer_aws_account_id: account, ...options });
  const handed = await handoff(registration.registration_token);
  expect(await deliver(handed.message)).toMatchObject({ acked: true });
  return { account, ...handed };
}

async function rowsOf(acquisitionId: string) {
  const acquisition = await env.DB.prepare("SELECT status FROM acquisitions WHERE id = ?")
    .bind(acquisitionId)
    .first<{ status: string }>();
  const stages = await env.DB.prepare("SELECT count(*) AS n FROM acquisition_stages WHERE acquisition_id = ?")
    .bind(acquisitionId)
    .first<{ n: number }>();
  return { status: acquisition?.status ?? null, stages: stages?.n ?? 0 };
}

async function runScheduled(scheduledTime: Date) {
  const controller = createScheduledController({ scheduledTime, cron: "* * * * *" });
  const ctx = createExecutionContext();
  await worker.scheduled(controller, env, ctx);
  await waitOnExecutionContext(ctx);
}

/** The first whole hour at least `hours` from now. */
function wholeHourAfter(hours: number): Date {
  const at = new Date(Date.now() + hours * 3_600_000);
  at.setUTCMinutes(60, 0, 0);
  return at;
}

describe("expired acquisitions", () => {
  it("are deleted a day after their last change when unclaimed or failed; claimed ones and what they set up stay", async () => {
    const unclaimed = await acquisitionFor();
    const failed = await acquisitionFor({ scenario: "expired" });
    const claimed = await acquisitionFor();
    expect((await claim(await developmentToken(), claimed.acquisitionId, claimed.claimReference)).status).toBe(200);
    expect(await rowsOf(unclaimed.acquisitionId)).toMatchObject({ status: "completed" });
    expect(await rowsOf(failed.acquisitionId)).toMatchObject({ status: "failed" });

    // Within the bound nothing goes, nor at a scheduled run that is not on the hour.
    expect(await deleteExpiredAcquisitions(database(env.DB), new Date(Date.now() + 23 * 3_600_000))).toBe(0);
    const offTheHour = wholeHourAfter(25);
    offTheHour.setUTCMinutes(5);
    await runScheduled(offTheHour);
    expect((await rowsOf(unclaimed.acquisitionId)).status).toBe("completed");

    await runScheduled(wholeHourAfter(24));

    expect(await rowsOf(unclaimed.acquisitionId)).toEqual({ status: null, stages: 0 });
    expect(await rowsOf(failed.acquisitionId)).toEqual({ status: null, stages: 0 });
    const kept = await rowsOf(claimed.acquisitionId);
    expect(kept.status).toBe("completed");
    expect(kept.stages).toBeGreaterThan(0);
    // A first-time cloud account gets its account at the claim, so the unclaimed one leaves nothing
    // behind; what the claimed one set up stays.
    const stranded = await holdingsOf(unclaimed.account);
    expect([stranded.accounts.length, stranded.organisations.length, stranded.passports.length]).toEqual([0, 0, 0]);
    const holdings = await holdingsOf(claimed.account);
    expect([holdings.accounts.length, holdings.organisations.length, holdings.passports.length]).toEqual([1, 2, 1]);
  });
});
