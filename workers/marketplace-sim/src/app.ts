import { Hono } from "hono";
import { z } from "zod";
import { marketplacePage, setupRedirectPage } from "./pages.ts";
import {
  AwsError,
  errorResponse,
  JSON_11,
  jsonResponse,
  SERVICES,
  type Service,
  signatureProblem,
} from "./protocol.ts";
import { entitlementsOf, type Registration, RegistrationRequest, register, registration } from "./registrations.ts";
import { NotificationRequest, SIGNING_CERT_PATH, signedNotification } from "./sns.ts";
import { TEST_SNS_CERTIFICATE_PEM } from "./sns-test-certificate.ts";

export const app = new Hono<{ Bindings: Env }>();

const ResolveCustomerRequest = z.object({ RegistrationToken: z.string().min(1) });
const GetEntitlementsRequest = z.object({
  ProductCode: z.string().min(1),
  Filter: z
    .object({
      CUSTOMER_IDENTIFIER: z.array(z.string()).optional(),
      CUSTOMER_AWS_ACCOUNT_ID: z.array(z.string()).optional(),
      DIMENSION: z.array(z.string()).optional(),
    })
    .optional(),
  NextToken: z.string().optional(),
  MaxResults: z.number().int().min(1).max(25).optional(),
});

const ONE_YEAR_SECONDS = 365 * 24 * 3600;

function resolveCustomer(body: unknown) {
  const parsed = ResolveCustomerRequest.safeParse(body);
  if (!parsed.success) throw new AwsError("InvalidParameterException", 400, "RegistrationToken is required.");
  const found = registration(parsed.data.RegistrationToken);
  if (!found) throw new AwsError("InvalidTokenException", 400, "Registration token is invalid.");
  found.resolveCalls++;
  failWhileCounting(found, "throttle", "ThrottlingException", 400, "Rate exceeded.");
  failWhileCounting(found, "internal", "InternalServiceErrorException", 500, "An internal error has occurred.");
  if (found.scenario === "expired") throw new AwsError("ExpiredTokenException", 400, "Registration token has expired.");
  if (found.scenario === "disabled") {
    throw new AwsError("DisabledApiException", 400, "The API is not available in this Region.");
  }
  return {
    CustomerAWSAccountId: found.customerAwsAccountId,
    ProductCode: found.productCode,
    ...(found.customerIdentifier ? { CustomerIdentifier: found.customerIdentifier } : {}),
    ...(found.licenseArn ? { LicenseArn: found.licenseArn } : {}),
  };
}

function failWhileCounting(found: Registration, scenario: string, type: string, status: number, message: string) {
  if (found.scenario === scenario && found.failuresLeft > 0) {
    found.failuresLeft--;
    throw new AwsError(type, status, message);
  }
}

function getEntitlements(body: unknown) {
  const parsed = GetEntitlementsRequest.safeParse(body);
  if (!parsed.success) throw new AwsError("InvalidParameterException", 400, "ProductCode is required.");
  const { ProductCode, Filter } = parsed.data;
  if (Filter?.CUSTOMER_IDENTIFIER && Filter.CUSTOMER_AWS_ACCOUNT_ID) {
    throw new AwsError(
      "InvalidParameterException",
      400,
      "CUSTOMER_IDENTIFIER and CUSTOMER_AWS_ACCOUNT_ID cannot be combined.",
    );
  }
  const found = entitlementsOf(ProductCode, {
    accountIds: Filter?.CUSTOMER_AWS_ACCOUNT_ID,
    customerIds: Filter?.CUSTOMER_IDENTIFIER,
  });
  for (const r of found) failWhileCounting(r, "entitlement-throttle", "ThrottlingException", 400, "Rate exceeded.");
  const expires = Math.floor(Date.now() / 1000) + ONE_YEAR_SECONDS;
  return {
    Entitlements: found.map((r) => ({
      ProductCode: r.productCode,
      Dimension: "api_passport",
      CustomerAWSAccountId: r.customerAwsAccountId,
      ...(r.customerIdentifier ? { CustomerIdentifier: r.customerIdentifier } : {}),
      Value: { BooleanValue: true },
      // "unreadable-expiry" answers an expiry no parser can read, which must not count as entitled.
      ExpirationDate: r.scenario === "unreadable-expiry" ? "end of next month" : expires,
    })),
  };
}

const OPERATIONS: Record<string, { service: Service; run: (body: unknown) => unknown }> = {
  [`${SERVICES.metering.target}.ResolveCustomer`]: { service: "metering", run: resolveCustomer },
  [`${SERVICES.entitlement.target}.GetEntitlements`]: { service: "entitlement", run: getEntitlements },
};

app.get("/health", (c) => c.json({ status: "ok" }));
// No icon: an empty answer keeps browsers' automatic request from a 404.
app.get("/favicon.ico", (c) => c.body(null, 204, { "cache-control": "public, max-age=3600" }));

/** Issues a registration token for tests and scripts (the real marketplace does this on "Subscribe"). */
app.post("/sim/registrations", async (c) => {
  const parsed = RegistrationRequest.safeParse(await c.req.json().catch(() => undefined));
  if (!parsed.success) return c.json({ error: parsed.error.issues }, 400);
  const r = register(parsed.data);
  return c.json(
    {
      registration_token: r.token,
      customer_aws_account_id: r.customerAwsAccountId,
      product_code: r.productCode,
      license_arn: r.licenseArn ?? null,
      customer_identifier: r.customerIdentifier ?? null,
      scenario: r.scenario,
      offer_type: r.offerType ?? null,
    },
    201,
  );
});

/** How often a token was redeemed, so tests can tell a retried call from one that was not. */
app.post("/sim/calls", async (c) => {
  const body = await c.req.json<{ registration_token?: string }>().catch(() => ({ registration_token: undefined }));
  const found = body.registration_token ? registration(body.registration_token) : undefined;
  return c.json({ resolve_customer: found?.resolveCalls ?? 0 });
});

app.get("/", (c) => c.html(marketplacePage(c.env.FULFILLMENT_URL)));

/** The "Set up your account" step: the browser is sent on to the fulfillment URL with a form post. */
app.post("/sim/subscribe", async (c) => {
  const form = await c.req.formData();
  const account = String(form.get("customer_aws_account_id") ?? "").trim();
  const parsed = RegistrationRequest.safeParse({
    customer_aws_account_id: account === "" ? undefined : account,
    product_code: String(form.get("product_code") ?? "prod-passport-api"),
    legacy: form.get("legacy") === "on",
    scenario: String(form.get("scenario") ?? "ok"),
    offer_type: form.get("offer_type") ? String(form.get("offer_type")) : undefined,
  });
  if (!parsed.success) return c.text(`Invalid subscription form: ${parsed.error.message}`, 400);
  const r = register(parsed.data);
  return c.html(setupRedirectPage(c.env.FULFILLMENT_URL, r.token, r.offerType));
});

/** A signed SNS Notification envelope, as SNS would deliver it, for tests and scripts to relay. */
app.post("/sim/sns/notifications", async (c) => {
  const parsed = NotificationRequest.safeParse(await c.req.json().catch(() => undefined));
  if (!parsed.success) return c.json({ error: parsed.error.issues }, 400);
  return c.json(await signedNotification(parsed.data, new URL(c.req.url).origin), 201);
});

app.get(
  SIGNING_CERT_PATH,
  () => new Response(TEST_SNS_CERTIFICATE_PEM, { headers: { "content-type": "application/x-x509-ca-cert" } }),
);

/** Both services on one host: the operation in X-Amz-Target decides which answers. */
app.post("*", async (c) => {
  const target = c.req.header("x-amz-target") ?? "";
  const operation = OPERATIONS[target];
  if (!operation) {
    return errorResponse("metering", new AwsError("UnknownOperationException", 400, `Unknown operation ${target}.`));
  }
  const unsigned = signatureProblem(c.req.raw.headers);
  if (unsigned) return errorResponse(operation.service, unsigned);
  if (c.req.header("content-type")?.split(";")[0]?.trim() !== JSON_11) {
    return errorResponse(operation.service, new AwsError("SerializationException", 400, `Send ${JSON_11}.`));
  }
  const body = await c.req.json().catch(() => undefined);
  try {
    return jsonResponse(operation.run(body));
  } catch (error) {
    if (error instanceof AwsError) return errorResponse(operation.service, error);
    throw error;
  }
});
