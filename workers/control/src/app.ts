import { problem, problemResponse } from "@passport/domain";
import { Hono } from "hono";
import { authenticate } from "./access/authenticate.ts";
import { isRole } from "./access/roles.ts";
import { answerToError } from "./api/problem.ts";
import { limitSignIn, limitWrites } from "./api/rate-limit.ts";
import { routeByIdentity, routeByOrganisation } from "./api/routing.ts";
import { bindingChecksApi } from "./binding-checks/index.ts";
import type { AppEnv } from "./context.ts";
import { ensureDevelopmentMembership } from "./db/organisations.ts";
import { shardsOf } from "./db/shards.ts";
import { marketplace, marketplaceApi } from "./marketplace/index.ts";
import { notificationsApi } from "./notifications/index.ts";
import { me } from "./routes/me.ts";
import { organisations } from "./routes/organisations.ts";
import { passports } from "./routes/passports.ts";
import { publicAnswers } from "./routes/public.ts";
import { reference } from "./routes/reference.tsx";
import { uses } from "./routes/uses.ts";
import { dashboardUi } from "./ui/index.tsx";

export const app = new Hono<AppEnv>();

app.get("/health", (c) => c.json({ status: "ok" }));
// Rate limits (docs/limits.md), registered before the routes they guard.
app.use("/dashboard/sign-in", limitSignIn);
app.route("/", reference);
// The Dashboard's web pages; they call this same app's /v1 API in-process (docs/dashboard.md).
app.route(
  "/",
  dashboardUi((request, env) => app.fetch(request, env)),
);
// The marketplace posts the buyer's browser and relays events here without a Dashboard token.
app.route("/marketplace", marketplace);
// Public counts without a token (docs/reciprocal-trust.md).
app.route("/public", publicAnswers);

app.use("/v1/*", async (c, next) => {
  const principal = await authenticate(c.req.raw.headers, c.env);
  const shards = shardsOf(c.env);
  const wanted = principal.developmentMembership;
  if (c.env.ENVIRONMENT === "development" && wanted && isRole(wanted.role)) {
    await ensureDevelopmentMembership(shards, principal.subject, wanted.organisationId, wanted.role);
  }
  c.set("principal", principal);
  c.set("shards", shards);
  // Shard 0 holds the service-wide tables (marketplace, notifications); the routes below that
  // name a passport or an organisation replace it with the shard that holds it.
  c.set("db", shards.shard(0));
  await next();
});
app.use("/v1/*", limitWrites);
app.use("/v1/passports/:id", routeByIdentity);
app.use("/v1/passports/:id/*", routeByIdentity);
app.use("/v1/organisations/:id", routeByOrganisation);
app.use("/v1/organisations/:id/*", routeByOrganisation);

app.route("/v1/me", me);
app.route("/v1/passports", passports);
app.route("/v1/passports", bindingChecksApi);
app.route("/v1/passports", uses);
app.route("/v1/organisations", organisations);
app.route("/v1", marketplaceApi);
app.route("/v1/notifications", notificationsApi);

app.notFound((c) =>
  problemResponse(problem("route-not-found", { detail: `Nothing is served at ${new URL(c.req.url).pathname}.` })),
);

// Every failure is answered here, once: a refusal as its problem, anything else as `internal`.
app.onError(answerToError);
