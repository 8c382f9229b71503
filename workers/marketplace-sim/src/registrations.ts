import { z } from "zod";

/**
 * What a simulated registration token does when it is redeemed. Any token the simulator did not
 * issue is answered with InvalidTokenException, like a mistyped or forged token.
 */
const Scenario = z.enum([
  "ok",
  "expired",
  "disabled",
  "throttle",
  "internal",
  "not-entitled",
  "entitlement-throttle",
  "unreadable-expiry",
]);
type Scenario = z.infer<typeof Scenario>;

export const RegistrationRequest = z
  .object({
    customer_aws_account_id: z
      .string()
      .regex(/^\d{12}$/)
      .optional(),
    product_code: z.string().min(1).max(64).default("prod-passport-api"),
    /** A fixed license ARN (for a returning customer's same agreement); a fresh one otherwise. */
    license_arn: z.string().min(1).max(256).optional(),
    /** Legacy products get a CustomerIdentifier and no LicenseArn. */
    legacy: z.boolean().default(false),
    customer_identifier: z.string().min(1).max(64).optional(),
    scenario: Scenario.default("ok"),
    /**
     * The offer the buyer subscribed through, sent with the token as `x-amzn-marketplace-offer-type`
     * (the marketplace sends `free-trial` for a free trial of a priced offer, nothing otherwise).
     * Omitted: the API passport's zero-charge listing.
     */
    offer_type: z.enum(["free-trial"]).optional(),
    /** How many calls fail before the token resolves (throttle, internal, entitlement-throttle). */
    failures: z.number().int().min(0).max(100).default(1),
  })
  .strict();
export type RegistrationRequest = z.infer<typeof RegistrationRequest>;

export interface Registration {
  token: string;
  customerAwsAccountId: string;
  productCode: string;
  licenseArn?: string;
  customerIdentifier?: string;
  scenario: Scenario;
  offerType?: "free-trial";
  failuresLeft: number;
  resolveCalls: number;
}

// Module scope: the simulator is a single local isolate, and its tokens live as long as it does.
const byToken = new Map<string, Registration>();

function digits(count: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(count)), (b) => String(b % 10)).join("");
}

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/** Issues a registration token shaped like a real one (long, base64 with `+`, `/` and `=`). */
export function register(request: RegistrationRequest): Registration {
  const token = base64(crypto.getRandomValues(new Uint8Array(95)));
  const account = request.customer_aws_account_id ?? `9${digits(11)}`;
  const registration: Registration = {
    token,
    customerAwsAccountId: account,
    productCode: request.product_code,
    scenario: request.scenario,
    failuresLeft: request.failures,
    resolveCalls: 0,
    ...(request.offer_type ? { offerType: request.offer_type } : {}),
  };
  if (request.legacy) {
    registration.customerIdentifier = request.customer_identifier ?? `cust-${digits(10)}`;
  } else {
    registration.licenseArn =
      request.license_arn ?? `arn:aws:license-manager::${account}:license:l-${crypto.randomUUID().replaceAll("-", "")}`;
  }
  byToken.set(token, registration);
  return registration;
}

export function registration(token: string): Registration | undefined {
  return byToken.get(token);
}

/** Entitlements of one customer for one product, as GetEntitlements reports them. */
export function entitlementsOf(productCode: string, filter: { accountIds?: string[]; customerIds?: string[] }) {
  const matches = [...byToken.values()].filter(
    (r) =>
      r.productCode === productCode &&
      r.scenario !== "not-entitled" &&
      r.scenario !== "expired" &&
      r.scenario !== "disabled" &&
      (!filter.accountIds || filter.accountIds.includes(r.customerAwsAccountId)) &&
      (!filter.customerIds || (r.customerIdentifier && filter.customerIds.includes(r.customerIdentifier))),
  );
  const seen = new Set<string>();
  return matches.filter((r) => {
    const key = `${r.customerAwsAccountId}:${r.customerIdentifier ?? ""}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
