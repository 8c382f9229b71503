import { bodyLimit } from "hono/body-limit";
import { shardsOf } from "../db/shards.ts";
import { type MarketplaceEnv, secret } from "./config.ts";
import { keyedHash, randomReference, sealToken } from "./crypto.ts";
import { type HandoffFailure, handoffErrorResponse } from "./handoff-error.ts";
import type { AcquisitionMessage } from "./messages.ts";
import { recordAcquisition } from "./queries/acquisitions.ts";

const TOKEN_FIELD = "x-amzn-marketplace-token";
const OFFER_TYPE_FIELD = "x-amzn-marketplace-offer-type";
/** How long the claim reference in the redirect stays usable. */
const CLAIM_TTL_SECONDS = 30 * 60;
const MAX_FORM_BYTES = 16 * 1024;
const MAX_TOKEN_LENGTH = 4096;
// Registration tokens are opaque base64-like strings; anything else is not one.
const TOKEN_SHAPE = /^[A-Za-z0-9+/=_.:-]+$/;

type TokenRead = { token: string; offerType?: string } | { failure: string };

/**
 * Reads the token from the form the buyer's browser posts. Content type is unconfirmed by AWS
 * (platform facts), so urlencoded and multipart are both accepted through `formData()`.
 */
async function readToken(request: Request): Promise<TokenRead> {
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    return { failure: "The set-up request is not a form post, so it carries no registration token." };
  }
  const value = form.get(TOKEN_FIELD);
  if (value === null || value === "") {
    return { failure: "The marketplace did not pass a registration token with this request." };
  }
  if (typeof value !== "string") return { failure: "The registration token was sent as a file, not a form field." };
  // A relay that forgets to percent-encode turns the token's `+` into spaces; spaces are never valid.
  const token = value.trim().replace(/ /g, "+");
  if (token.length > MAX_TOKEN_LENGTH || !TOKEN_SHAPE.test(token)) {
    return { failure: "The registration token is malformed (it may have been cut short or altered on the way)." };
  }
  const offerType = form.get(OFFER_TYPE_FIELD);
  return { token, ...(typeof offerType === "string" && offerType ? { offerType: offerType.slice(0, 64) } : {}) };
}

/**
 * Refuses a set-up form larger than any registration token needs, counting while it streams in (a
 * chunked body is never read whole), with the same page or problem as any other refused handoff.
 */
export const limitFulfillForm = bodyLimit({
  maxSize: MAX_FORM_BYTES,
  onError: (c) =>
    handoffErrorResponse(c.req.header("accept") ?? null, {
      kind: "payload-too-large",
      detail: "The set-up form is larger than a registration token can be.",
      next: "restart_setup",
      stage: "registration_token_handoff",
      occurredAt: new Date().toISOString(),
    }),
});

function onboardingLocation(env: Env, acquisitionId: string, claimReference: string): string {
  const url = new URL(env.DASHBOARD_ONBOARDING_URL);
  url.searchParams.set("acquisition", acquisitionId);
  // The fragment never reaches a server, so the claim reference stays out of access logs and Referer.
  url.hash = `claim=${claimReference}`;
  return url.toString();
}

/**
 * `POST /marketplace/fulfill` (spec 4.2, 4.3 step 3): records the handoff under a keyed hash of
 * the token, queues the token sealed with AES-GCM, and answers 303 to the Dashboard onboarding
 * page with a single-use claim reference (never the token). The same token posted again is the
 * same acquisition; a missing or malformed token creates nothing.
 */
export async function fulfill(request: Request, env: MarketplaceEnv): Promise<Response> {
  const occurredAt = new Date().toISOString();
  const accept = request.headers.get("accept");
  const fail = (failure: Omit<HandoffFailure, "stage" | "occurredAt">) =>
    handoffErrorResponse(accept, { ...failure, stage: "registration_token_handoff", occurredAt });

  const read = await readToken(request);
  if ("failure" in read) {
    console.warn(JSON.stringify({ level: "warn", event: "handoff_rejected", reason: read.failure }));
    return fail({ kind: "invalid-registration-token", detail: read.failure, next: "restart_setup" });
  }
  const hashKey = secret(env, "MARKETPLACE_TOKEN_HASH_KEY");
  const claimReference = randomReference("clm_");
  const db = shardsOf(env).shard(0);
  const { acquisition, created } = await recordAcquisition(db, {
    tokenHash: await keyedHash(hashKey, "registration-token", read.token),
    claimHash: await keyedHash(hashKey, "claim-reference", claimReference),
    claimExpiresAt: new Date(Date.parse(occurredAt) + CLAIM_TTL_SECONDS * 1000).toISOString(),
    offerType: read.offerType,
    at: occurredAt,
  });
  // A re-post finds the same acquisition; it is queued again only while nothing has picked it up
  // (the first enqueue may have failed). Duplicates are harmless: the consumer is idempotent.
  if (created || acquisition.status === "received") {
    const message: AcquisitionMessage = {
      kind: "acquisition",
      version: 1,
      acquisition_id: acquisition.id,
      sealed_token: await sealToken(secret(env, "MARKETPLACE_TOKEN_ENCRYPTION_KEY"), acquisition.id, read.token),
      posted_at: occurredAt,
    };
    try {
      await env.ACQUISITIONS.send(message, { contentType: "json" });
    } catch (error) {
      console.error(
        JSON.stringify({
          level: "error",
          event: "handoff_enqueue_failed",
          acquisition_id: acquisition.id,
          message: String(error),
        }),
      );
      return fail({
        kind: "unavailable",
        detail: "Set-up could not be queued just now; nothing was lost or duplicated.",
        next: "retry",
      });
    }
  }
  console.log(JSON.stringify({ level: "info", event: "handoff_received", acquisition_id: acquisition.id, created }));
  return new Response(null, {
    status: 303,
    headers: {
      location: onboardingLocation(env, acquisition.id, claimReference),
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    },
  });
}
