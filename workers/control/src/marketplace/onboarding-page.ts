import { Hono } from "hono";
import { html, raw } from "hono/html";
import type { AppEnv } from "../context.ts";

/**
 * A stand-in for the Dashboard's onboarding screen, served only in development so `npm start`
 * runs the acquisition end to end in a browser. It reads the claim reference from the URL
 * fragment, shows progress from GET /v1/acquisitions/{id}, and claims with a development token.
 */
export const onboardingPage = new Hono<AppEnv>();

const SCRIPT = raw(`
const params = new URLSearchParams(location.search);
const id = params.get("acquisition");
const claim = new URLSearchParams(location.hash.slice(1)).get("claim");
const tokenInput = document.getElementById("token");
tokenInput.value = localStorage.getItem("passport-dev-token") || "";
const out = document.getElementById("progress");
const result = document.getElementById("result");
function headers() {
  localStorage.setItem("passport-dev-token", tokenInput.value.trim());
  const h = { authorization: "Bearer " + tokenInput.value.trim(), "content-type": "application/json" };
  if (claim) h["x-claim-reference"] = claim;
  return h;
}
function row(cells) {
  const tr = document.createElement("tr");
  for (const text of cells) { const td = document.createElement("td"); td.textContent = text ?? ""; tr.append(td); }
  return tr;
}
async function refresh() {
  if (!id || !tokenInput.value.trim()) return;
  const response = await fetch("/v1/acquisitions/" + encodeURIComponent(id), { headers: headers() });
  const body = await response.json();
  if (!response.ok) { result.textContent = body.detail || body.title; return; }
  document.getElementById("status").textContent = body.status + " (next: " + body.next + ")";
  out.replaceChildren(...body.stages.map((s) => row([s.label, s.status, s.outcome || (s.error && s.error.message) || "", s.at])));
  if (body.status === "processing" || body.status === "received") setTimeout(refresh, 1000);
}
document.getElementById("claim").addEventListener("click", async () => {
  const response = await fetch("/v1/acquisitions/" + encodeURIComponent(id) + "/claim", {
    method: "POST", headers: headers(), body: JSON.stringify({ claim_reference: claim || "" }),
  });
  const body = await response.json();
  if (!response.ok) { result.textContent = (body.detail || body.title); return; }
  result.replaceChildren();
  const p = document.createElement("p");
  p.textContent = (body.existing_account ? "Existing account recognised. " : "Account claimed. ") +
    "Your API passport: " + body.passport.identity_id;
  const a = document.createElement("a");
  a.href = body.passport.resolver_url; a.textContent = "Re-check it in the Resolver";
  result.append(p, a);
  refresh();
});
document.getElementById("load").addEventListener("click", refresh);
refresh();
`);

onboardingPage.get("/", (c) => {
  if (c.env.ENVIRONMENT !== "development") {
    return c.text("The Dashboard's onboarding page is served by the Dashboard, not by this API.", 404);
  }
  return c.html(
    html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Onboarding: your API passport</title>
<meta name="referrer" content="no-referrer">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}
td{padding:.2rem .6rem;border-bottom:1px solid #ddd}input{width:100%;font:inherit}</style>
</head>
<body>
  <h1>Set up your API passport</h1>
  <p>Development stand-in for the Dashboard. Paste the development token <code>npm start</code> printed
    (or one from <code>npm run token</code>), then claim the acquisition.</p>
  <label for="token">Development token</label>
  <input id="token" autocomplete="off">
  <p><button id="load">Show progress</button> <button id="claim">Claim this acquisition</button></p>
  <p>Status: <strong id="status">…</strong></p>
  <table><tbody id="progress"></tbody></table>
  <div id="result"></div>
  <script>${SCRIPT}</script>
</body>
</html>`,
    200,
    { "cache-control": "no-store" },
  );
});
