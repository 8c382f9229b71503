// Arbitrary requests against the control plane's whole surface (/v1, the marketplace routes and the
// Dashboard's pages and forms), with real, foreign and forged credentials. Whatever arrives, the answer is
// never a 5xx, and D1 and KV are left consistent: every committed version has its history event, and the
// resolver's snapshot is the newest version unless a publication is still owed in the outbox. The
// generators include text with control, bidirectional and invisible characters and look-alike hosts.
import { env, exports } from "cloudflare:workers";
import { DEVELOPMENT_ISSUER, PROBLEM_TYPE_BASE } from "@passport/domain";
import fc from "fast-check";
import { importJWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Body, Caller, uniqueEndpoint } from "../support/api.ts";
import { shardOfIdentity, shardOfOrganisation } from "../support/shards.ts";
import { developmentToken, freshOrganisation } from "../support/tokens.ts";

const ORIGIN = "http://control.test";
/** Requests per property; the two properties together send at least 10,000. */
const RUNS = 5_000;

interface World {
  owner: Caller;
  viewer: Caller;
  stranger: Caller;
  passports: string[];
  childIds: string[];
  tokens: string[];
  cookie: string;
  csrf: string;
}

let world: World;
let sent = 0;
const statuses = new Map<number, number>();

/** Tokens a hostile or confused caller might present: foreign, expired, unsigned, empty subject, garbage. */
async function forgedTokens(organisation: string): Promise<string[]> {
  const jwk = JSON.parse(env.TEST_DEV_PRIVATE_JWK);
  const key = await importJWK(jwk, "ES256");
  const sign = (claims: Record<string, unknown>, subject: string | undefined, issuer = DEVELOPMENT_ISSUER) => {
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", kid: jwk.kid, typ: "JWT" })
      .setIssuer(issuer)
      .setAudience(env.AUTH_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime("10m");
    if (subject !== undefined) jwt.setSubject(subject);
    return jwt.sign(key);
  };
  const valid = await developmentToken({ organisation, role: "owner" });
  const [header, payload] = valid.split(".");
  const unsigned = `${btoa(JSON.stringify({ alg: "none", typ: "JWT" })).replaceAll("=", "")}.${payload}.`;
  return [
    `${header}.${payload}.${"A".repeat(86)}`,
    unsigned,
    await sign({ org: organisation, role: "owner" }, ""),
    await sign({ org: organisation, role: "owner" }, "   "),
    await sign({ org: organisation, role: "owner" }, undefined),
    await sign({ org: organisation, role: "superuser" }, "mallory"),
    await sign({ org: organisation, role: "owner" }, "mallory", "https://evil.example/"),
    "not-a-jwt",
    "",
  ];
}

/** Signs in on the Dashboard as a browser would and returns its session cookie. */
async function signIn(token: string): Promise<string> {
  const response = await exports.default.fetch(`${ORIGIN}/dashboard/sign-in`, {
    method: "POST",
    headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token, next: "/dashboard/passports" }),
    redirect: "manual",
  });
  expect(response.status).toBe(303);
  return (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
}

beforeAll(async () => {
  const organisation = freshOrganisation();
  const owner = await Caller.create("owner", organisation);
  const viewer = await Caller.create("viewer", organisation);
  const stranger = await Caller.create("owner");
  const api = await owner.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] });
  const agent = await owner.createPassport({
    family: "agent",
    bindings: [{ class: "manifest", value: `https://${crypto.randomUUID().slice(0, 8)}.agents.example/card.json` }],
  });
  const foreign = await stranger.createPassport({ bindings: [{ class: "endpoint", value: uniqueEndpoint() }] });
  const withChildren = (await owner.json("POST", `/v1/passports/${api.identity_id}/evidence`, {
    claim: "organisation.identity",
    source: "https://registry.example/records/1",
    scope: "organisation",
    observed_at: new Date().toISOString(),
  })) as Body;
  const childIds = [
    ...(withChildren.bindings ?? []).map((b: Body) => b.id),
    ...(withChildren.evidence ?? []).map((e: Body) => e.id),
  ].filter((id): id is string => typeof id === "string");
  const cookie = await signIn(owner.token);
  const page = await exports.default.fetch(`${ORIGIN}/dashboard/passports/${api.identity_id}`, { headers: { cookie } });
  const html = await page.text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
  expect(csrf, "the passport page carries a CSRF token for its forms").not.toBe("");
  world = {
    owner,
    viewer,
    stranger,
    passports: [api.identity_id, agent.identity_id, foreign.identity_id],
    childIds,
    tokens: [owner.token, viewer.token, stranger.token, ...(await forgedTokens(organisation))],
    cookie,
    csrf,
  };
});

afterAll(() => {
  console.log(
    JSON.stringify({ event: "control_fuzz", requests: sent, statuses: Object.fromEntries([...statuses].sort()) }),
  );
});

/** Text with a character that changes how it is shown: controls, bidirectional overrides, invisible ones. */
const hostileText = fc
  .tuple(
    fc.string({ maxLength: 10 }),
    fc.constantFrom("\u001b[32mOK", "a\rb", "x\u202Ey", "\u2066", "\u200B", "\u0000", "\u{E0041}", "l\nb", "\u0085"),
    fc.string({ maxLength: 10 }),
  )
  .map(([before, hostile, after]) => `${before}${hostile}${after}`);

/** Hosts that read as another name, or that only differ from one by spelling. */
const lookalikeUrl = fc.constantFrom(
  "https://pаyments.demo.example/v1",
  "https://xn--pyments-2fg.demo.example/v1",
  "https://раура.com/agent-card.json",
  "https://gοogle.example/v1",
  "https://localhost./card.json",
  "https://metadata.google.internal./card.json",
  "https://resolver.invalid./api/p/x.json",
  "https://a..example/v1",
  "https://bücher.example/v1",
  "HTTPS://API.Example.COM.:443/v1?#top",
);
const urlArbitrary = fc.oneof(fc.webUrl(), lookalikeUrl);
const textArbitrary = (maxLength: number) => fc.oneof(fc.string({ maxLength }), hostileText);

const weird = fc.constantFrom(
  "%1B%5B32mOK",
  "%E2%80%AE",
  "%E2%80%8B",
  "%25",
  "%",
  "%2",
  "%E0%A4%A",
  "%00",
  "..",
  "%2e%2e",
  "a%2Fb",
  "🙂",
  "x".repeat(600),
  "psp_",
  "",
  " ",
);

/** A path segment: usually an id the world knows (read when the request is generated), else something odd. */
const segment = (known: () => string[]) =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.nat().map((i) => {
        const ids = known();
        return ids[i % ids.length] as string;
      }),
    },
    { weight: 2, arbitrary: weird },
    { weight: 1, arbitrary: fc.string({ maxLength: 24 }).map(encodeURIComponent) },
  );

/** Paths across every route family, with known ids most of the time so requests reach the handlers. */
const pathArbitrary = fc
  .tuple(
    fc.constantFrom(
      "/v1/me",
      "/v1/organisations",
      "/v1/organisations/{org}",
      "/v1/organisations/{org}/members/{any}",
      "/v1/organisations/{org}/subscriptions",
      "/v1/passports",
      "/v1/passports/batch",
      "/v1/passports/{id}",
      "/v1/passports/{id}/bindings",
      "/v1/passports/{id}/bindings/{child}",
      "/v1/passports/{id}/evidence",
      "/v1/passports/{id}/evidence/{child}",
      "/v1/passports/{id}/state",
      "/v1/passports/{id}/authority",
      "/v1/passports/{id}/authority/{child}",
      "/v1/passports/{id}/authority/{child}/expire",
      "/v1/passports/{id}/duplicate-of",
      "/v1/passports/{id}/transfer",
      "/v1/passports/{id}/history",
      "/v1/passports/{id}/uses",
      "/v1/passports/{id}/uses/{id}",
      "/v1/passports/{id}/declared-by",
      "/public/passports/{id}/declared-by",
      "/v1/acquisitions/{any}",
      "/v1/acquisitions/{any}/claim",
      "/marketplace/fulfill",
      "/marketplace/events",
      "/dashboard/passports",
      "/dashboard/passports/{id}",
      "/dashboard/passports/{id}/bindings",
      "/dashboard/passports/{id}/bindings/{child}/replace",
      "/dashboard/passports/{id}/bindings/{child}/remove",
      "/dashboard/passports/{id}/bindings/{child}/context",
      "/dashboard/passports/{id}/evidence",
      "/dashboard/passports/{id}/evidence/{child}/withdraw",
      "/dashboard/passports/{id}/lifecycle",
      "/dashboard/passports/{id}/state",
      "/dashboard/passports/{id}/recheck",
      "/dashboard/passports/new",
      "/dashboard/passports/{id}/authority",
      "/dashboard/passports/{id}/authority/{child}/expire",
      "/dashboard/passports/{id}/authority/{child}/remove",
      "/dashboard/passports/{id}/transfer",
      "/dashboard/passports/{id}/duplicate",
      "/dashboard/passports/{id}/details",
      "/dashboard/passports/{id}/uses",
      "/dashboard/passports/{id}/uses/{id}/remove",
      "/dashboard/organisations",
      "/dashboard/organisations/{org}",
      "/dashboard/sign-in",
      "/dashboard/sign-out",
      "/dashboard/onboarding",
      "/dashboard/onboarding/reference",
      "/dashboard/onboarding/claim",
      "/openapi.json",
      "/health",
      "/{any}",
    ),
    segment(() => world.passports),
    segment(() => [world.owner.organisation, world.stranger.organisation]),
    segment(() => world.childIds),
    segment(() => [world.owner.subject, world.viewer.subject, "nobody"]),
    fc.option(
      fc.constantFrom("?limit=0", "?limit=abc", "?cursor=%25", "?after=-1", "?family=api&family=agent", "?q=%"),
      {
        nil: "",
      },
    ),
  )
  .map(([template, id, org, child, any, query]) =>
    template.replace("{id}", id).replace("{org}", org).replace("{child}", child).replace("{any}", any).concat(query),
  );

/**
 * A create listing one binding twice (among others), alone or as a batch item beside a valid one:
 * the create is refused (400), never the whole request with a 5xx.
 */
const repeatedBindingArbitrary = fc
  .tuple(
    fc.constantFrom("api", "agent"),
    fc.webUrl({ validSchemes: ["https"] }),
    fc.array(fc.webUrl({ validSchemes: ["https"] }), { maxLength: 2 }),
    fc.boolean(),
  )
  .map(([family, value, others, inBatch]) => {
    const primary = family === "api" ? "endpoint" : "manifest";
    const binding = { class: primary, value };
    const bindings = [
      binding,
      ...others.map((v) => ({ class: "documentation", value: v })),
      { ...binding, label: "again" },
    ];
    const create = { family, bindings };
    return inBatch ? { items: [{ create }, { create: { family, display_name: "Second" } }] } : create;
  });

/** Bodies near the real ones (so validation and rules are reached), and arbitrary JSON. */
const jsonBodyArbitrary = fc.oneof(
  fc.record(
    {
      family: fc.constantFrom("api", "agent", "person", 1),
      organisation_id: fc.constantFrom("org_demo", "", "x"),
      display_name: fc.oneof(fc.string(), hostileText, fc.constant("sk_live_0123456789abcdefghijklmnop")),
      bindings: fc.array(
        fc.record({
          class: fc.constantFrom("endpoint", "manifest", "openapi", "gateway", "x"),
          value: urlArbitrary,
          label: textArbitrary(20),
        }),
        { maxLength: 3 },
      ),
      environment: fc.string({ maxLength: 40 }),
      version: fc.string({ maxLength: 40 }),
      distinct_object_reason: fc.string({ maxLength: 40 }),
    },
    { requiredKeys: [] },
  ),
  fc.record(
    {
      class: fc.constantFrom("endpoint", "manifest", "openapi", "repository", "gateway"),
      value: fc.oneof(urlArbitrary, fc.string(), hostileText),
      label: textArbitrary(20),
    },
    { requiredKeys: [] },
  ),
  fc.record(
    {
      claim: fc.string({ maxLength: 30 }),
      source: fc.oneof(fc.webUrl(), fc.string(), hostileText),
      scope: textArbitrary(30),
      observed_at: fc.oneof(
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        fc.string(),
      ),
      fresh_until: fc.oneof(
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        fc.string(),
      ),
    },
    { requiredKeys: [] },
  ),
  fc.record(
    {
      lifecycle: fc.constantFrom("active", "suspended", "revoked", "retired", "deleted"),
      availability: fc.constantFrom("available", "degraded", "unavailable", "x"),
      reason: textArbitrary(30),
      recheck_completed: fc.boolean(),
      survivor_id: fc.constantFrom("psp_x", "", "self"),
      organisation_id: fc.string({ maxLength: 30 }),
      role: fc.constantFrom("owner", "admin", "editor", "viewer", "root"),
      name: textArbitrary(30),
    },
    { requiredKeys: [] },
  ),
  // A create listing one binding twice, alone or as a batch item beside a valid one: the item is
  // refused (400), never the whole request with a 5xx.
  { weight: 3, arbitrary: repeatedBindingArbitrary },
  fc.jsonValue({ maxDepth: 3 }),
);

interface Shape {
  method: string;
  path: string;
  credential: number;
  body:
    | { kind: "none" }
    | { kind: "json"; value: unknown }
    | { kind: "raw"; text: string; type: string }
    | { kind: "form"; fields: Record<string, string> };
  ifMatch: string | undefined;
  origin: string | undefined;
  useCookie: boolean;
}

const shapeArbitrary: fc.Arbitrary<Shape> = fc.record({
  method: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"),
  path: pathArbitrary,
  // Mostly the owner, so requests get past authentication and reach the rules; -1 sends no token.
  credential: fc.oneof(
    { weight: 4, arbitrary: fc.constant(0) },
    { weight: 2, arbitrary: fc.constantFrom(1, 2) },
    { weight: 3, arbitrary: fc.integer({ min: -1, max: 11 }) },
  ),
  body: fc.oneof(
    fc.constant({ kind: "none" as const }),
    jsonBodyArbitrary.map((value) => ({ kind: "json" as const, value })),
    fc
      .tuple(
        fc.oneof(fc.string({ maxLength: 200 }), fc.constant("{"), fc.constant('{"a":'), fc.constant("\uFEFF{}")),
        fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data"),
      )
      .map(([text, type]) => ({ kind: "raw" as const, text, type })),
    fc
      .dictionary(
        fc.constantFrom(
          "csrf",
          "record_version",
          "lifecycle",
          "class",
          "value",
          "claim",
          "source",
          "scope",
          "token",
          "next",
          "acquisition",
          "claim_reference",
          "x-amzn-marketplace-token",
          "action",
          "context",
          "expires_at",
          "organisation_id",
          "reason",
          "survivor_id",
          "family",
          "primary",
          "extra_class",
          "extra_value",
          "distinct_object_reason",
        ),
        fc.oneof(fc.string({ maxLength: 40 }), hostileText, lookalikeUrl),
      )
      .map((fields) => ({ kind: "form" as const, fields })),
  ),
  ifMatch: fc.option(fc.constantFrom('"v1"', '"v2"', "*", "v1", '"v999"', '""'), { nil: undefined }),
  origin: fc.option(fc.constantFrom(ORIGIN, "https://evil.example", "null"), { nil: undefined }),
  useCookie: fc.boolean(),
});

function toRequest(shape: Shape): Request | undefined {
  const headers = new Headers();
  const token = shape.credential >= 0 ? world.tokens[shape.credential % world.tokens.length] : undefined;
  if (token !== undefined) headers.set("authorization", `Bearer ${token}`);
  if (shape.useCookie) headers.set("cookie", world.cookie);
  if (shape.ifMatch) headers.set("if-match", shape.ifMatch);
  if (shape.origin) headers.set("origin", shape.origin);
  let body: string | undefined;
  switch (shape.body.kind) {
    case "json":
      headers.set("content-type", "application/json");
      body = JSON.stringify(shape.body.value);
      break;
    case "raw":
      headers.set("content-type", shape.body.type);
      body = shape.body.text;
      break;
    case "form": {
      headers.set("content-type", "application/x-www-form-urlencoded");
      const fields = { ...shape.body.fields };
      if (fields.csrf === "") fields.csrf = world.csrf;
      body = new URLSearchParams(fields).toString();
      break;
    }
  }
  const canHaveBody = shape.method !== "GET" && shape.method !== "HEAD";
  try {
    return new Request(`${ORIGIN}${shape.path}`, {
      method: shape.method,
      headers,
      body: canHaveBody ? body : undefined,
      redirect: "manual",
    });
  } catch {
    return undefined; // no client could send it
  }
}

async function expectSound(request: Request, response: Response): Promise<void> {
  sent++;
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  const text = await response.text();
  const label = `${request.method} ${request.url} -> ${response.status} ${text.slice(0, 300)}`;
  expect(response.status, label).toBeLessThan(500);
  expect(response.status, label).toBeGreaterThanOrEqual(200);
  if (request.method !== "HEAD" && response.headers.get("content-type")?.startsWith("application/problem+json")) {
    const problem = JSON.parse(text) as { type: string; status: number };
    expect(problem.type.startsWith(PROBLEM_TYPE_BASE), label).toBe(true);
    expect(problem.status, label).toBe(response.status);
  }
  for (const secret of world.tokens.filter((t) => t.length > 20)) {
    expect(text.includes(secret), `${label}: echoes a bearer token`).toBe(false);
  }
}

async function runProperty(seed: number): Promise<void> {
  // Thousands of refusals are logged as warnings by design; errors still reach the output.
  const quiet = [vi.spyOn(console, "warn"), vi.spyOn(console, "log")].map((spy) => spy.mockImplementation(() => {}));
  try {
    await fc.assert(
      fc.asyncProperty(shapeArbitrary, async (shape) => {
        const request = toRequest(shape);
        if (!request) return;
        await expectSound(request, await exports.default.fetch(request));
      }),
      { numRuns: RUNS, seed, endOnFailure: true },
    );
  } finally {
    for (const spy of quiet) spy.mockRestore();
  }
}

/** Consistency of what the fuzzed organisations hold, in D1 and in KV. */
async function expectConsistent(organisations: string[]): Promise<void> {
  type Row = { id: string; record_version: number; newest_event: number; event_count: number; owed: number | null };
  const rows = (
    await Promise.all(
      organisations.map(
        async (organisation) =>
          (
            await (
              await shardOfOrganisation(organisation)
            )
              .prepare(
                `SELECT p.id, p.record_version,
                        (SELECT MAX(record_version) FROM events e WHERE e.passport_id = p.id) AS newest_event,
                        (SELECT COUNT(*) FROM events e WHERE e.passport_id = p.id) AS event_count,
                        (SELECT record_version FROM outbox o WHERE o.passport_id = p.id) AS owed
                   FROM passports p WHERE p.organisation_id = ?`,
              )
              .bind(organisation)
              .all<Row>()
          ).results,
      ),
    )
  ).flat();
  expect(rows.length).toBeGreaterThanOrEqual(2);
  for (const row of rows) {
    expect(row.newest_event, `${row.id}: every version has its history event`).toBe(row.record_version);
    expect(row.event_count, `${row.id}: one event per version`).toBe(row.record_version);
    const snapshot = await env.SNAPSHOTS.getWithMetadata<{ record_version: number }>(`passport:${row.id}`);
    if (row.owed === null) {
      expect(snapshot.metadata?.record_version, `${row.id}: published version is the newest`).toBe(row.record_version);
    } else {
      expect(row.owed, `${row.id}: the outbox owes the newest version`).toBe(row.record_version);
    }
    const { results: chain } = await (await shardOfIdentity(row.id))
      .prepare(
        "SELECT record_version, digest, previous_digest FROM publications WHERE passport_id = ? ORDER BY record_version",
      )
      .bind(row.id)
      .all<{ record_version: number; digest: string; previous_digest: string | null }>();
    chain.forEach((link, i) => {
      expect(link.previous_digest ?? null, `${row.id} v${link.record_version}: chain is linear`).toBe(
        i === 0 ? null : (chain[i - 1]?.digest ?? null),
      );
    });
  }
  for (const organisation of organisations) {
    const owners = await (await shardOfOrganisation(organisation))
      .prepare("SELECT COUNT(*) AS n FROM members WHERE organisation_id = ? AND role = 'owner'")
      .bind(organisation)
      .first<{ n: number }>();
    expect(owners?.n ?? 0, `${organisation} keeps an owner`).toBeGreaterThanOrEqual(1);
  }
}

describe("arbitrary requests to the control plane", () => {
  it("never get a 5xx, with real, foreign and forged credentials (first half)", async () => {
    await runProperty(20261123);
  }, 600_000);

  it("never get a 5xx, with real, foreign and forged credentials (second half)", async () => {
    await runProperty(4242);
    expect(sent).toBeGreaterThanOrEqual(2 * RUNS * 0.95);
  }, 600_000);

  it("a create repeating a binding is refused alone, in a batch too, never with a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(repeatedBindingArbitrary, async (body) => {
        const batch = "items" in body;
        // A caller of its own each time: the properties above use up the owner's write limit.
        const caller = await Caller.create("owner");
        const request = new Request(`${ORIGIN}/v1/passports${batch ? "/batch" : ""}`, {
          method: "POST",
          headers: { authorization: `Bearer ${caller.token}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        const response = await exports.default.fetch(request.clone());
        const answer = (await response.clone().json()) as { status?: number; results?: { status: number }[] };
        await expectSound(request, response);
        if (batch) expect(answer.results?.[0]?.status).toBe(400);
        else expect(response.status).toBe(400);
      }),
      { numRuns: 25, seed: 2025 },
    );
  });

  it("leave D1 and KV consistent: no partial write, no stale snapshot, an owner kept", async () => {
    await expectConsistent([world.owner.organisation, world.stranger.organisation]);
  });
});
