import { Hono } from "hono";
import type { ApiFetch } from "./api.ts";
import { assetVersions } from "./assets.ts";
import type { UiEnv } from "./context.ts";
import { formPosts, signedIn } from "./guard.tsx";
import { onboardingRoutes } from "./onboarding.tsx";
import { organisationListPages } from "./organisation-list.tsx";
import { organisationPages } from "./organisation-page.tsx";
import { passportActions } from "./passport-actions.tsx";
import { passportCreation } from "./passport-create.tsx";
import { passportListPage } from "./passport-list.tsx";
import { passportPage } from "./passport-page.tsx";
import { signInRoutes } from "./sign-in.tsx";

/**
 * The Dashboard's web pages, server-rendered with hono/jsx on the API's origin. They read and
 * write only through the public Dashboard API (`fetchApi` is the control plane's own fetch), so
 * every authorization decision is the API's. See docs/dashboard.md.
 * @example
 * app.route("/", dashboardUi((request, env) => app.fetch(request, env)));
 */
export function dashboardUi(fetchApi: ApiFetch) {
  const ui = new Hono<UiEnv>();
  // No icon: answering here keeps browsers' automatic request out of the API's 404 log.
  ui.get("/favicon.ico", (c) =>
    c.body(null, 204, { "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff" }),
  );
  // Pages link the static files (public/assets/, served by Workers Static Assets) by content hash.
  ui.use("/dashboard/*", assetVersions);
  ui.use("/dashboard/*", formPosts);
  ui.get("/", (c) => c.redirect("/dashboard/passports", 302));
  ui.get("/dashboard", (c) => c.redirect("/dashboard/passports", 302));
  ui.route("/dashboard", signInRoutes(fetchApi));
  ui.route("/dashboard/onboarding", onboardingRoutes(fetchApi));

  const pages = new Hono<UiEnv>();
  pages.use("*", signedIn(fetchApi));
  pages.get("/passports", passportListPage);
  // Before /passports/:id, which would otherwise take "new" for an identity id.
  pages.route("/passports", passportCreation);
  pages.get("/passports/:id", (c) => passportPage(c, c.req.param("id")));
  pages.route("/passports", passportActions);
  pages.route("/organisations", organisationListPages);
  pages.route("/organisations", organisationPages);
  ui.route("/dashboard", pages);
  return ui;
}
