import { Hono } from "hono";
import { requireMembership } from "../access/membership.ts";
import { operation } from "../api/operations.ts";
import type { AppEnv } from "../context.ts";
import { membershipIn } from "../db/organisations.ts";
import { ClaimRequest, claimAcquisition, claimHash, claimUsable, notFound } from "./claim.ts";
import type { MarketplaceEnv } from "./config.ts";
import { limitClaims } from "./limits.ts";
import { accountOf, findAcquisition } from "./queries/acquisitions.ts";
import { subscriptionHistory } from "./queries/history.ts";
import { AcquisitionView, acquisitionView, SubscriptionHistory } from "./views.ts";

/** The Dashboard API's side of the marketplace, mounted at /v1 (signed-in callers only). */
export const marketplaceApi = new Hono<AppEnv>();

marketplaceApi.use("/acquisitions/:id/claim", limitClaims);

const CLAIM_HEADER = "x-claim-reference";

/**
 * Progress, stage by stage. Visible to members of the acquisition's account organisation, and,
 * before the claim, to whoever presents its claim reference in the X-Claim-Reference header.
 */
marketplaceApi.get(
  "/acquisitions/:id",
  operation({
    method: "get",
    path: "/v1/acquisitions/{id}",
    summary: "A marketplace acquisition's progress, stage by stage (before the claim: send X-Claim-Reference)",
    role: "any member",
    response: { AcquisitionView },
  }),
  async (c) => {
    const db = c.get("db");
    const { subject } = c.get("principal");
    const row = await findAcquisition(db, c.req.param("id"));
    if (!row) throw notFound();
    const account = await accountOf(db, row);
    const member = account ? await membershipIn(db, subject, account.organisationId) : undefined;
    const reference = c.req.header(CLAIM_HEADER);
    const holdsReference =
      !!reference && claimUsable(row, await claimHash(c.env as MarketplaceEnv, reference), new Date().toISOString());
    if (!member && !holdsReference) throw notFound();
    return c.json(await acquisitionView(db, c.env, row, subject), 200, { "cache-control": "no-store" });
  },
);

/**
 * The signed-in customer claims the acquisition with the single-use reference from the redirect
 * (spec 4.3 step 9). For a cloud account seen for the first time, the claimant chooses where the
 * subscription belongs: `organisation_id` names an organisation they own or administer (its API
 * passport is reused), and without it a new account organisation is made with them as its owner.
 * For a known cloud account, an existing member is recognised and nothing is added; anyone else is
 * refused. Retrying a claim that was used but not finished (same user) finishes it.
 */
marketplaceApi.post(
  "/acquisitions/:id/claim",
  operation({
    method: "post",
    path: "/v1/acquisitions/{id}/claim",
    summary: "Claim a completed marketplace acquisition with its single-use claim reference (docs/acquisition.md)",
    role: "any member",
    body: { ClaimRequest },
    response: { AcquisitionView },
  }),
  async (c) => {
    const { acquisition, existingAccount } = await claimAcquisition(
      c.env as MarketplaceEnv,
      c.get("db"),
      c.get("principal").subject,
      c.req.param("id"),
      c.req.valid("json"),
    );
    const view = await acquisitionView(c.get("db"), c.env, acquisition, c.get("principal").subject);
    return c.json({ ...view, existing_account: existingAccount });
  },
);

/**
 * Products and entitlements (spec 4.4): the marketplace subscriptions held through this
 * organisation, each with its subscription events, and the acquisitions that set them up with
 * each stage (activation among them). Members only; to anyone else the organisation does not exist.
 */
marketplaceApi.get(
  "/organisations/:id/subscriptions",
  operation({
    method: "get",
    path: "/v1/organisations/{id}/subscriptions",
    summary: "Marketplace subscriptions with their events, and the acquisitions with their stages",
    role: "viewer",
    response: { SubscriptionHistory },
  }),
  async (c) => {
    const id = c.req.param("id");
    await requireMembership(c.get("db"), c.get("principal").subject, id, c.get("declaredRole"));
    return c.json(await subscriptionHistory(c.get("db"), id));
  },
);
