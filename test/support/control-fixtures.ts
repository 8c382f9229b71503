import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { app } from "../../workers/control/src/app.ts";
import type { Body, Caller } from "./api.ts";
import { json, serve, uniqueHost } from "./hosts.ts";

// Fixtures the control plane's tests share: a passport with a proven binding, and the Dashboard.

/**
 * An agent passport of `caller`'s organisation (with `fields` of the create request) whose manifest
 * at a fresh host is verified now by the member's check.
 */
export async function verifiedManifest(caller: Caller, fields: Record<string, unknown> = {}) {
  const host = uniqueHost("agent");
  const manifest = `https://${host}/card.json`;
  const passport = await caller.createPassport({
    family: "agent",
    ...fields,
    bindings: [{ class: "manifest", value: manifest }],
  });
  const id = passport.identity_id as string;
  const bindingId = passport.bindings[0].id as string;
  await serve(host, { "/card.json": json({ passport: id }) });
  const proven = await caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
  expect(proven.result).toBe("verified");
  return { host, manifest, id, bindingId, proof: proven.passport.bindings[0] as Body };
}

/** A Dashboard request as `caller`; with `form`, a form post from the Dashboard's own origin. */
export function dashboard(caller: Caller, path: string, form?: Record<string, string>) {
  const url = new URL(path, "http://control.test");
  return app.request(
    url.href,
    form
      ? {
          method: "POST",
          headers: {
            "cf-access-jwt-assertion": caller.token,
            origin: "http://control.test",
            "content-type": "application/x-www-form-urlencoded",
          },
          body: new URLSearchParams(form).toString(),
          redirect: "manual",
        }
      : { headers: { "cf-access-jwt-assertion": caller.token } },
    env,
  );
}
