import { type Problem, type ProblemKind, problem, problemResponse } from "@passport/domain";
import { html } from "hono/html";
import { STAGE_LABELS, type Stage } from "./stages.ts";

export interface HandoffFailure {
  kind: ProblemKind;
  detail: string;
  stage: Stage;
  occurredAt: string;
  next: "restart_setup" | "retry" | "contact_support";
}

function wantsHtml(accept: string | null): boolean {
  if (!accept) return false;
  const html = accept.indexOf("text/html");
  const json = Math.max(accept.indexOf("application/problem+json"), accept.indexOf("application/json"));
  return html !== -1 && (json === -1 || html < json);
}

/**
 * Spec 7, "Subscribe unavailable": the customer confirms the product is visible to them. Nothing
 * reaches the service when it is not, so the guidance stands wherever set-up is restarted.
 */
const SUBSCRIBE_UNAVAILABLE =
  "If the listing or its subscribe option is not shown to you, confirm the product is visible to your cloud account: while it is being tested, only the cloud accounts the seller allowed see it; once public, every buyer does. Do not create another account or passport to work around it.";

const NEXT_TEXT: Record<HandoffFailure["next"], string> = {
  restart_setup: `Return to the marketplace listing and choose "Set up your account" again. ${SUBSCRIBE_UNAVAILABLE}`,
  retry: "Go back and submit again in a moment.",
  contact_support:
    "If this keeps happening, contact support with the time and stage below. Never send the registration token.",
};

/**
 * The answer to a handoff that could not start: an HTML page for a browser (the marketplace sends
 * the buyer's browser here), problem+json for everything else. Both name the stage and the time
 * (spec 5.6, 7 "Set-up step fails") and never echo what was posted.
 */
export async function handoffErrorResponse(accept: string | null, failure: HandoffFailure): Promise<Response> {
  const body: Problem = problem(failure.kind, {
    detail: failure.detail,
    stage: failure.stage,
    occurred_at: failure.occurredAt,
    next: failure.next,
  });
  const headers = { "cache-control": "no-store", "referrer-policy": "no-referrer" };
  if (!wantsHtml(accept)) return problemResponse(body, headers);
  const page = await html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Set-up could not start</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}dt{font-weight:600}</style>
</head>
<body>
  <h1>Set-up could not start</h1>
  <p>${failure.detail}</p>
  <p>${NEXT_TEXT[failure.next]}</p>
  <dl>
    <dt>Stage</dt><dd>${STAGE_LABELS[failure.stage]} (<code>${failure.stage}</code>)</dd>
    <dt>Time</dt><dd><time datetime="${failure.occurredAt}">${failure.occurredAt}</time></dd>
    <dt>Error</dt><dd><code>${body.type}</code></dd>
  </dl>
</body>
</html>`;
  return new Response(page.toString(), {
    status: body.status,
    headers: { ...headers, "content-type": "text/html; charset=utf-8" },
  });
}
