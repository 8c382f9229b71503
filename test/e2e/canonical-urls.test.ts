// One canonical form for every URL a tenant gives (docs/canonical-urls.md): stored, compared for
// duplicates and conflicts, indexed and matched in it, so another spelling of one address never
// skips the duplicate rule, hides a conflict or misses the manifest index (issue #25).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type Body, Caller } from "../support/api.ts";
import { json, serve, uniqueHost } from "../support/hosts.ts";

const RESOLVER = "http://resolver.test";

async function envelopeFor(target: string): Promise<Body> {
  const response = await env.TEST_RESOLVER.fetch(`${RESOLVER}/api/agent-envelope?target=${encodeURIComponent(target)}`);
  return response.json<Body>();
}

/** The same address, spelt another way: upper case, trailing dot, default port, empty query, fragment. */
function respelt(url: string): string {
  const { hostname, pathname } = new URL(url);
  return `HTTPS://${hostname.toUpperCase()}.:443${pathname}?#section`;
}

async function proveManifest(caller: Caller, id: string, bindingId: string, names: string[]) {
  const passport = await caller.json("GET", `/v1/passports/${id}`);
  const url = new URL(passport.bindings.find((b: Body) => b.id === bindingId).value);
  await serve(url.hostname, { [url.pathname]: json({ passports: names }) });
  return caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
}

describe("canonical binding values", () => {
  it("stores the canonical form of what was typed, with an internationalised host in ASCII", async () => {
    const caller = await Caller.create("admin");
    const host = uniqueHost("pay");
    const created = await caller.createPassport({
      bindings: [
        { class: "endpoint", value: respelt(`https://${host}/v1`) },
        { class: "documentation", value: `https://docs-${host.replace(".example.com", "")}.bücher.example/guide` },
      ],
    });
    expect(created.bindings.map((b: Body) => b.value).sort()).toEqual(
      [`https://${host}/v1`, `https://docs-${host.replace(".example.com", "")}.xn--bcher-kva.example/guide`].sort(),
    );
  });

  it("refuses a host with an empty label", async () => {
    const caller = await Caller.create("admin");
    const response = await caller.request("POST", "/v1/passports", {
      family: "api",
      bindings: [{ class: "endpoint", value: "https://api..example.com/v1" }],
    });
    expect(response.status).toBe(400);
  });

  it("applies the duplicate rule to another spelling of the same primary binding", async () => {
    const caller = await Caller.create("admin");
    const endpoint = `https://${uniqueHost("pay")}/v1`;
    const first = await caller.createPassport({ bindings: [{ class: "endpoint", value: endpoint }] });
    const again = await caller.request("POST", "/v1/passports", {
      family: "api",
      bindings: [{ class: "endpoint", value: respelt(endpoint) }],
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({
      type: "urn:svc:passport:problem:duplicate-identity",
      existing_identity_id: first.identity_id,
    });
    // And the passport cannot bind its own value twice under two spellings.
    const twice = await caller.request("POST", `/v1/passports/${first.identity_id}/bindings`, {
      class: "endpoint",
      value: respelt(endpoint),
    });
    expect(twice.status).toBe(409);
  });

  it("finds a manifest by any spelling, and records a conflict proven under two spellings", async () => {
    const mine = await Caller.create("admin");
    const theirs = await Caller.create("admin");
    const manifest = `https://${uniqueHost("agents")}/agent-card.json`;
    const first = await mine.createPassport({ family: "agent", bindings: [{ class: "manifest", value: manifest }] });
    const second = await theirs.createPassport({
      family: "agent",
      bindings: [{ class: "manifest", value: respelt(manifest) }],
    });
    const proven = await proveManifest(mine, first.identity_id, first.bindings[0].id, [first.identity_id]);
    expect(proven.result).toBe("verified");
    for (const target of [manifest, respelt(manifest), `${manifest}#x`, `${manifest}?`]) {
      expect((await envelopeFor(target)).identity_id, target).toBe(first.identity_id);
    }
    const both = [first.identity_id, second.identity_id];
    const outcome = await proveManifest(theirs, second.identity_id, second.bindings[0].id, both);
    expect(outcome.result).toBe("verified");
    const history = await theirs.json("GET", `/v1/passports/${second.identity_id}/history`);
    expect(history.items.at(-1)).toMatchObject({
      kind: "binding.verified",
      detail: { conflicts_with: [first.identity_id] },
    });
    expect(await envelopeFor(respelt(manifest))).toMatchObject({ result: "conflicting_proof", identity_id: null });
  });

  it("refuses a look-alike host, typed in Unicode or through its punycode name", async () => {
    const caller = await Caller.create("admin");
    for (const value of ["https://pаyments.demo.example/v1", "https://xn--pyments-2fg.demo.example/v1"]) {
      const response = await caller.request("POST", "/v1/passports", {
        family: "api",
        bindings: [{ class: "endpoint", value }],
      });
      expect(response.status, value).toBe(400);
      expect(await response.json()).toMatchObject({
        errors: [{ path: "bindings.0.value", message: expect.stringContaining("pаyments mixes Latin and Cyrillic") }],
      });
    }
  });

  it("shows an internationalised host on the proof page in ASCII, as checked, beside its Unicode form", async () => {
    const caller = await Caller.create("admin");
    const label = `bücher-${crypto.randomUUID().slice(0, 8)}`;
    const created = await caller.createPassport({
      bindings: [{ class: "endpoint", value: `https://${label}.example/v1` }],
    });
    const ascii = new URL(`https://${label}.example/v1`).href;
    expect(ascii).toMatch(/^https:\/\/xn--/);
    expect(created.bindings[0].value).toBe(ascii);
    const page = await (await env.TEST_RESOLVER.fetch(`${RESOLVER}/p/${created.identity_id}`)).text();
    expect(page).toContain(`>${ascii}</a>`);
    expect(page).toContain(`reads as ${label}.example`);
  });
});
