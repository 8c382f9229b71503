import type { Problem } from "@passport/domain";
import { Hono } from "hono";
import { type ApiFetch, dashboardApi } from "./api.ts";
import type { UiEnv } from "./context.ts";
import { safeNext } from "./guard.tsx";
import { Layout, ProblemMessage, pageHeaders } from "./layout.tsx";
import { currentSession, endSession, refuseForgedPost, startSession } from "./session.ts";

function SignInPage(props: { development: boolean; next: string; problem?: Problem; expired?: boolean }) {
  return (
    <Layout title="Sign in">
      <h1>Sign in to the Passport Dashboard</h1>
      {props.expired ? (
        <div class="notice" role="status">
          Your sign-in has expired or is no longer accepted. Sign in again.
        </div>
      ) : null}
      {props.development ? (
        <form method="post" action="/dashboard/sign-in" class="panel">
          <input type="hidden" name="next" value={props.next} />
          <label for="token">Development token</label>
          <p class="hint" id="token-hint">
            Paste the token <code>npm start</code> printed, or make one for any subject and role with{" "}
            <code>npm run token -- --sub alice --role editor</code>. Local development only: in production you sign in
            through your organisation's identity provider.
          </p>
          <textarea
            id="token"
            name="token"
            rows={4}
            required
            autocomplete="off"
            spellcheck={false}
            aria-describedby={props.problem ? "token-hint sign-in-problem" : "token-hint"}
            aria-invalid={props.problem ? "true" : undefined}
          />
          {props.problem ? <ProblemMessage problem={props.problem} id="sign-in-problem" /> : null}
          <p>
            <button type="submit">Sign in</button>
          </p>
        </form>
      ) : (
        <div class="panel">
          <p>
            The Dashboard signs you in through your organisation's identity provider (Cloudflare Access). Open{" "}
            <a href={props.next}>the Dashboard</a> again to be sent to it.
          </p>
          {props.problem ? <ProblemMessage problem={props.problem} /> : null}
        </div>
      )}
    </Layout>
  );
}

/** Sign-in and sign-out. A pasted token is accepted only when the Dashboard API accepts it. */
export function signInRoutes(fetchApi: ApiFetch) {
  const routes = new Hono<UiEnv>();

  routes.get("/sign-in", (c) => {
    pageHeaders(c);
    const next = safeNext(c.req.query("next"));
    const development = c.env.ENVIRONMENT === "development";
    if (currentSession(c) && c.req.query("reason") !== "expired") return c.redirect(next, 303);
    return c.html(<SignInPage development={development} next={next} expired={c.req.query("reason") === "expired"} />);
  });

  routes.post("/sign-in", async (c) => {
    pageHeaders(c);
    const form = await c.req.formData();
    const next = safeNext(String(form.get("next") ?? ""));
    const development = c.env.ENVIRONMENT === "development";
    const refuse = (problem: Problem) =>
      c.html(<SignInPage development={development} next={next} problem={problem} />, problem.status as 400);
    // A sign-in posted from another site (login CSRF) never gets here (formPosts, guard.tsx);
    // outside development, pasting a token is not a way to sign in.
    if (!development) {
      return refuse({ type: "urn:svc:passport:problem:forbidden", title: "Sign-in refused", status: 403 });
    }
    const token = String(form.get("token") ?? "").trim();
    const me = await dashboardApi(fetchApi, c.env, new URL(c.req.url).origin, token).call("/v1/me");
    if (!me.ok) return refuse(me.problem);
    startSession(c, token);
    return c.redirect(next, 303);
  });

  routes.post("/sign-out", async (c) => {
    const session = currentSession(c);
    if (session) {
      const refused = await refuseForgedPost(session, await c.req.formData());
      if (refused) return c.text(refused, 403);
    }
    endSession(c);
    // Under Cloudflare Access the identity provider's session ends at Access's own logout route.
    return c.redirect(session?.via === "access" ? "/cdn-cgi/access/logout" : "/dashboard/sign-in", 303);
  });

  return routes;
}
