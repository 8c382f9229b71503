import { AwsClient } from "aws4fetch";
import { z } from "zod";
import { type MarketplaceEnv, secret } from "./config.ts";

const JSON_11 = "application/x-amz-json-1.1";
const SIGNING_NAME = "aws-marketplace";

/** ResolveCustomer's answer (botocore meteringmarketplace 2016-01-14); unknown members are ignored. */
export const ResolvedCustomer = z.object({
  CustomerAWSAccountId: z
    .string()
    .regex(/^\d{1,32}$/)
    .optional(),
  CustomerIdentifier: z.string().min(1).max(255).optional(),
  ProductCode: z.string().min(1).max(255),
  LicenseArn: z.string().min(1).max(1024).optional(),
});
export type ResolvedCustomer = z.infer<typeof ResolvedCustomer>;

const GetEntitlementsResult = z.object({
  Entitlements: z
    .array(
      z.object({
        ProductCode: z.string().optional(),
        Dimension: z.string().optional(),
        CustomerIdentifier: z.string().optional(),
        CustomerAWSAccountId: z.string().optional(),
        // Read by entitlementIsCurrent, which refuses what it cannot parse instead of failing the page.
        ExpirationDate: z.unknown().optional(),
      }),
    )
    .default([]),
  NextToken: z.string().optional(),
});

/**
 * Errors the marketplace answers with, by retry class (platform facts, botocore models).
 * Anything else from a 5xx or the network is treated as retryable; any other 4xx is not.
 */
const RETRYABLE = new Set(["ThrottlingException", "InternalServiceErrorException"]);

export class MarketplaceError extends Error {
  constructor(
    /** The marketplace's error type (`ExpiredTokenException`), or ours for transport failures. */
    readonly type: string,
    readonly retryable: boolean,
    message: string,
  ) {
    super(message);
  }
}

/** Extracts an AWS JSON error type: body `__type` or `x-amzn-ErrorType`, without `ns#` prefix or `:uri` suffix. */
export function errorType(headers: Headers, body: unknown): string | undefined {
  const raw =
    (body && typeof body === "object" && "__type" in body && typeof body.__type === "string"
      ? body.__type
      : undefined) ??
    headers.get("x-amzn-errortype") ??
    undefined;
  if (!raw) return undefined;
  const withoutPrefix = raw.includes("#") ? raw.slice(raw.lastIndexOf("#") + 1) : raw;
  return withoutPrefix.split(":")[0] || undefined;
}

/** Year 9999: an expiry beyond it is not a date the marketplace writes (milliseconds sent as seconds, say). */
const LATEST_EXPIRY_SECONDS = 253_402_300_799;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Whether an entitlement with this `ExpirationDate` is current at `now` (ms). No expiry means no
 * end. AWS JSON 1.1 sends timestamps as epoch seconds; an ISO 8601 date-time is read too. Anything
 * else fails closed: an expiry we cannot read never counts as entitled.
 * @example
 * entitlementIsCurrent(1893456000, Date.now()); // true until 2030
 * entitlementIsCurrent("soon", Date.now()); // false
 */
export function entitlementIsCurrent(expiration: unknown, now: number): boolean {
  if (expiration === undefined) return true;
  let expires = Number.NaN;
  if (typeof expiration === "number" && expiration >= 0 && expiration <= LATEST_EXPIRY_SECONDS) {
    expires = expiration * 1000;
  } else if (typeof expiration === "string" && ISO_DATE_TIME.test(expiration)) {
    expires = Date.parse(expiration);
  }
  return !Number.isNaN(expires) && expires > now;
}

export interface MarketplaceClient {
  resolveCustomer(registrationToken: string): Promise<ResolvedCustomer>;
  /** Whether the marketplace reports a current entitlement of this customer to this product. */
  hasEntitlement(customer: ResolvedCustomer): Promise<boolean>;
}

/**
 * The marketplace adapter (spec 4.3 step 4): SigV4-signed AWS JSON 1.1 calls through aws4fetch,
 * against the configured endpoints. aws4fetch's own retries are off: the queue retries with
 * backoff, and a redelivered message never holds the token longer than its own retry window.
 * @example
 * const customer = await marketplaceClient(env).resolveCustomer(token);
 */
export function marketplaceClient(env: MarketplaceEnv): MarketplaceClient {
  const aws = new AwsClient({
    accessKeyId: secret(env, "MARKETPLACE_AWS_ACCESS_KEY_ID"),
    secretAccessKey: secret(env, "MARKETPLACE_AWS_SECRET_ACCESS_KEY"),
    sessionToken: env.MARKETPLACE_AWS_SESSION_TOKEN || undefined,
    service: SIGNING_NAME,
    region: env.MARKETPLACE_REGION,
    retries: 0,
  });
  const sim = env.MARKETPLACE_SIM;
  const send = (request: Request) => (sim ? sim.fetch(request) : fetch(request));

  async function call(url: string, target: string, payload: unknown): Promise<unknown> {
    let response: Response;
    try {
      const signed = await aws.sign(url, {
        method: "POST",
        headers: { "content-type": JSON_11, "x-amz-target": target },
        body: JSON.stringify(payload),
      });
      response = await send(signed);
    } catch (error) {
      throw new MarketplaceError("NetworkError", true, `The marketplace could not be reached (${String(error)}).`);
    }
    const body: unknown = await response.json().catch(() => undefined);
    if (response.ok) return body;
    const type = errorType(response.headers, body) ?? `HTTP${response.status}`;
    const message =
      body && typeof body === "object" && "message" in body && typeof body.message === "string"
        ? body.message
        : `HTTP ${response.status}`;
    throw new MarketplaceError(type, RETRYABLE.has(type) || response.status >= 500, message);
  }

  return {
    async resolveCustomer(registrationToken) {
      const body = await call(env.MARKETPLACE_METERING_URL, "AWSMPMeteringService.ResolveCustomer", {
        RegistrationToken: registrationToken,
      });
      const parsed = ResolvedCustomer.safeParse(body);
      if (!parsed.success) {
        throw new MarketplaceError("UnexpectedResponse", false, "ResolveCustomer answered in an unexpected shape.");
      }
      if (!parsed.data.CustomerAWSAccountId && !parsed.data.CustomerIdentifier) {
        throw new MarketplaceError("UnexpectedResponse", false, "ResolveCustomer named no customer.");
      }
      return parsed.data;
    },

    async hasEntitlement(customer) {
      // The two customer filters cannot be combined; the account id is the current one.
      const filter = customer.CustomerAWSAccountId
        ? { CUSTOMER_AWS_ACCOUNT_ID: [customer.CustomerAWSAccountId] }
        : { CUSTOMER_IDENTIFIER: [customer.CustomerIdentifier as string] };
      const now = Date.now();
      let nextToken: string | undefined;
      // NextToken may come back with an empty page, so keep paging while one is returned.
      for (let page = 0; page < 20; page++) {
        const body = await call(env.MARKETPLACE_ENTITLEMENT_URL, "AWSMPEntitlementService.GetEntitlements", {
          ProductCode: customer.ProductCode,
          Filter: filter,
          MaxResults: 25,
          ...(nextToken ? { NextToken: nextToken } : {}),
        });
        const parsed = GetEntitlementsResult.safeParse(body);
        if (!parsed.success) {
          throw new MarketplaceError("UnexpectedResponse", false, "GetEntitlements answered in an unexpected shape.");
        }
        if (parsed.data.Entitlements.some((e) => entitlementIsCurrent(e.ExpirationDate, now))) return true;
        nextToken = parsed.data.NextToken;
        if (!nextToken) return false;
      }
      return false;
    },
  };
}
