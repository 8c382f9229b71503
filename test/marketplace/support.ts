import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { decodeJwt } from "jose";
import { expect } from "vitest";
import { database } from "../../workers/control/src/db/client.ts";
import { shardsOf } from "../../workers/control/src/db/shards.ts";
import worker from "../../workers/control/src/index.ts";
import { keyedHash, randomReference, sealToken } from "../../workers/control/src/marketplace/crypto.ts";
import type { AcquisitionMessage } from "../../workers/control/src/marketplace/messages.ts";
import { recordAcquisition } from "../../workers/control/src/marketplace/queries/acquisitions.ts";
import { queueNames } from "../../workers/control/src/queues.ts";
import { developmentToken, freshOrganisation } from "../support/tokens.ts";

export interface Registration {
  registration_token: string;
  customer_aws_account_id: string;
  product_code: string;
  license_arn: string | null;
  customer_identifier: string | null;
  offer_type: "free-trial" | null;
}

export interface RegistrationOptions {
  customer_aws_account_id?: string;
  product_code?: string;
  license_arn?: string;
  legacy?: boolean;
  scenario?:
    | "ok"
    | "expired"
    | "disabled"
    | "throttle"
    | "internal"
    | "not-entitled"
    | "entitlement-throttle"
    | "unreadable-expiry";
  offer_type?: "free-trial";
  failures?: number;
}

/** Subscribes in the simulated marketplace and returns the registration token it issued. */
export async function subscribe(options: RegistrationOptions = {}): Promise<Registration> {
  const response = await env.MARKETPLACE_SIM.fetch("http://marketplace.test/sim/registrations", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(options),
  });
  expect(response.status).toBe(201);
  return response.json();
}

/** A fresh 12-digit cloud account id, so tests never share customers. */
export function freshAccountId(): string {
  return `7${Array.from(crypto.getRandomValues(new Uint8Array(11)), (b) => b % 10).join("")}`;
}

/** The buyer's browser posting the set-up form (redirects are not followed). */
export function postFulfill(
  token: string | undefined,
  accept = "text/html,application/xhtml+xml,*/*;q=0.8",
  offerType?: string | null,
) {
  const form = new URLSearchParams();
  if (token !== undefined) form.set("x-amzn-marketplace-token", token);
  if (offerType) form.set("x-amzn-marketplace-offer-type", offerType);
  return exports.default.fetch("http://control.test/marketplace/fulfill", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept },
    body: form,
    redirect: "manual",
  });
}

export function parseLocation(location: string | null) {
  expect(location).toBeTruthy();
  const url = new URL(location as string);
  const acquisitionId = url.searchParams.get("acquisition");
  const claimReference = new URLSearchParams(url.hash.slice(1)).get("claim");
  expect(acquisitionId).toMatch(/^acq_/);
  expect(claimReference).toMatch(/^clm_/);
  return { url, acquisitionId: acquisitionId as string, claimReference: claimReference as string };
}

interface AcquisitionState {
  status: string;
  failed_stage: string | null;
  error_code: string | null;
  passport_id: string | null;
}

export async function acquisitionState(id: string): Promise<AcquisitionState> {
  const row = await env.DB.prepare(
    "SELECT status, failed_stage, error_code, passport_id FROM acquisitions WHERE id = ?",
  )
    .bind(id)
    .first<AcquisitionState>();
  expect(row).not.toBeNull();
  return row as AcquisitionState;
}

/** Waits for the real queue consumer to finish an acquisition posted through the fulfill route. */
export async function waitUntilFinished(id: string): Promise<AcquisitionState> {
  for (let i = 0; i < 200; i++) {
    const state = await acquisitionState(id);
    if (state.status === "completed" || state.status === "failed") return state;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`acquisition ${id} did not finish`);
}

/**
 * Records an acquisition as the fulfill route does and returns its queue message, without sending
 * it: the test delivers it to the consumer itself, as often and as concurrently as it wants.
 */
export async function handoff(token: string, offerType?: string | null) {
  const at = new Date().toISOString();
  const claimReference = randomReference("clm_");
  const { acquisition } = await recordAcquisition(database(env.DB), {
    tokenHash: await keyedHash(env.MARKETPLACE_TOKEN_HASH_KEY, "registration-token", token),
    claimHash: await keyedHash(env.MARKETPLACE_TOKEN_HASH_KEY, "claim-reference", claimReference),
    claimExpiresAt: new Date(Date.now() + 600_000).toISOString(),
    ...(offerType ? { offerType } : {}),
    at,
  });
  const message: AcquisitionMessage = {
    kind: "acquisition",
    version: 1,
    acquisition_id: acquisition.id,
    sealed_token: await sealToken(env.MARKETPLACE_TOKEN_ENCRYPTION_KEY, acquisition.id, token),
    posted_at: at,
  };
  return { acquisitionId: acquisition.id, claimReference, message };
}

/**
 * Delivers one message to the consumer as the queue would (on attempt `attempts`) and returns
 * whether it was acknowledged or retried. (The test helper does not report a retry's delay; the
 * consumer writes it on the stage, where the customer sees it.)
 */
export async function deliver(message: AcquisitionMessage, attempts = 1, queue = queueNames(undefined).acquisitions) {
  const batch = createMessageBatch(queue, [
    { id: crypto.randomUUID(), timestamp: new Date(), attempts, body: message },
  ]);
  const ctx = createExecutionContext();
  await worker.queue(batch, env, ctx);
  const result = await getQueueResult(batch, ctx);
  const id = batch.messages[0]?.id;
  return {
    acked: result.explicitAcks.includes(id as string),
    retried:
      result.retryMessages.some((m) => m.msgId === id) ||
      (result.retryBatch.retry && !result.explicitAcks.includes(id as string)),
  };
}

/** Delivers to the dead-letter queue of `environment` as the deploy names it (production if undefined). */
export function deliverToDeadLetterQueue(message: AcquisitionMessage, environment?: string) {
  return deliver(message, 1, queueNames(environment).deadLetter);
}

/** What exists in D1 for one cloud account: accounts, their organisations, and passports in them. */
export async function holdingsOf(awsAccountId: string) {
  const accounts = await env.DB.prepare(
    "SELECT id, organisation_id, parent_organisation_id FROM marketplace_accounts WHERE aws_account_id = ?",
  )
    .bind(awsAccountId)
    .all<{ id: string; organisation_id: string; parent_organisation_id: string }>();
  const orgIds = accounts.results.flatMap((a) => [a.organisation_id, a.parent_organisation_id]);
  const organisations = orgIds.length
    ? await env.DB.prepare(`SELECT id, parent_id FROM organisations WHERE id IN (${orgIds.map(() => "?").join(",")})`)
        .bind(...orgIds)
        .all<{ id: string; parent_id: string | null }>()
    : { results: [] };
  const accountOrgs = accounts.results.map((a) => a.organisation_id);
  const passports = accountOrgs.length
    ? await env.DB.prepare(
        `SELECT id, family, lifecycle FROM passports WHERE organisation_id IN (${accountOrgs.map(() => "?").join(",")})`,
      )
        .bind(...accountOrgs)
        .all<{ id: string; family: string; lifecycle: string }>()
    : { results: [] };
  return { accounts: accounts.results, organisations: organisations.results, passports: passports.results };
}

/** Organisations made for marketplace customers that no marketplace account row holds: there must never be any. */
export async function orphanedMarketplaceOrganisations(): Promise<number> {
  const row = await env.DB.prepare(
    `SELECT count(*) AS n FROM organisations o
     WHERE o.id LIKE 'org_mp_%'
       AND NOT EXISTS (SELECT 1 FROM marketplace_accounts a WHERE a.organisation_id = o.id OR a.parent_organisation_id = o.id)`,
  ).first<{ n: number }>();
  return row?.n ?? 0;
}

export function api(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return exports.default.fetch(`http://control.test${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export function claim(token: string, acquisitionId: string, claimReference: string) {
  return api(token, "POST", `/v1/acquisitions/${acquisitionId}/claim`, { claim_reference: claimReference });
}

/**
 * An organisation made through the API and placed in shard 0, beside the marketplace's accounts:
 * only such an organisation can hold a marketplace subscription (docs/sharding.md; one in another
 * shard is refused with `crosses-shards`, test/marketplace/shards.test.ts). A new organisation is
 * placed beside its creator's others, so the token's subject first gets an organisation the
 * directory places in shard 0 (as an operator's move would), and the one made here follows it.
 */
export async function organisationInShardZero(token: string, name: string): Promise<string> {
  const subject = decodeJwt(token).sub as string;
  const anchor = freshOrganisation();
  await shardsOf(env).placeOrganisation(anchor, { shard: 0 });
  expect(
    (await api(await developmentToken({ subject, organisation: anchor, role: "owner" }), "GET", "/v1/me")).status,
  ).toBe(200);
  const created = await api(token, "POST", "/v1/organisations", { name });
  expect(created.status).toBe(201);
  const { id } = await created.json<{ id: string }>();
  expect((await shardsOf(env).placementOf(id)).shard).toBe(0);
  return id;
}

/** A subscription of `account` processed by the consumer, ready to claim. */
export async function processed(account = freshAccountId()) {
  const handed = await handoff((await subscribe({ customer_aws_account_id: account })).registration_token);
  expect(await deliver(handed.message)).toMatchObject({ acked: true });
  return handed;
}

/** A claim of the acquisition, into `organisationId` when given (else a new organisation). */
export function claimInto(token: string, acquisitionId: string, claimReference: string, organisationId?: string) {
  return api(token, "POST", `/v1/acquisitions/${acquisitionId}/claim`, {
    claim_reference: claimReference,
    ...(organisationId ? { organisation_id: organisationId } : {}),
  });
}
