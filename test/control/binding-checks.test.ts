import { env } from "cloudflare:workers";
import { manifestIndexPrefix } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { refusal } from "../../workers/control/src/outbound/fetch.ts";
import { type Body, Caller, resolve } from "../support/api.ts";
import { json, serve, txt, uniqueHost } from "../support/hosts.ts";
import { recheckAt } from "../support/rechecks.ts";

const WELL_KNOWN = "/.well-known/passport-identity.json";

async function passportWith(caller: Caller, family: "api" | "agent", cls: string, value: string) {
  // Outside the marketplace an API passport is created by an owner or admin (docs/api-passports.md);
  // the caller, an editor, then manages it.
  const creator = family === "api" ? await Caller.create("admin", caller.organisation) : caller;
  const passport = await creator.createPassport({ family, bindings: [{ class: cls, value }] });
  return { id: passport.identity_id as string, bindingId: passport.bindings[0].id as string };
}

async function claimantsOf(manifest: string): Promise<string[]> {
  const { keys } = await env.SNAPSHOTS.list({ prefix: await manifestIndexPrefix(manifest) });
  return keys.map((key) => key.name.split(":").at(-1) ?? "");
}

function verify(caller: Caller, id: string, bindingId: string): Promise<Body> {
  return caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
}

describe("binding checks against the hosts simulator", () => {
  it("HTTP well-known: instructions first, then verified with the challenge; observed evidence and the published record follow", async () => {
    const caller = await Caller.create("editor");
    const host = uniqueHost("api");
    const { id, bindingId } = await passportWith(caller, "api", "endpoint", `https://${host}/v1`);

    const first = await verify(caller, id, bindingId);
    expect(first.result).toBe("not_proven");
    expect(first.reason).toContain(`https://${host}${WELL_KNOWN} answered HTTP 404`);
    const { url, document } = first.instructions.well_known;
    expect(url).toBe(`https://${host}${WELL_KNOWN}`);
    expect(document.identities[0].identity_id).toBe(id);
    expect(document.identities[0].challenge).toMatch(/^chl_/);
    expect(first.instructions.dns_txt.name).toBe(`_passport-identity.${host}`);
    expect(first.passport.bindings[0].verification).toEqual({ state: "claimed" });
    expect(first.passport.bindings[0].last_check.result).toContain("404");

    // Naming the id without the challenge is not enough for a first proof.
    await serve(host, { [WELL_KNOWN]: json({ identities: [{ identity_id: id }] }) });
    expect((await verify(caller, id, bindingId)).reason).toContain("without this binding's challenge");

    await serve(host, { [WELL_KNOWN]: json(document) });
    const proven = await verify(caller, id, bindingId);
    expect(proven.result).toBe("verified");
    const verification = proven.passport.bindings[0].verification;
    expect(verification).toMatchObject({ state: "verified", method: "http_well_known" });
    const evidence = proven.passport.evidence.find((e: Body) => e.id === verification.evidence);
    expect(evidence).toMatchObject({
      basis: "observed",
      source: "passport-service",
      scope: `https://${host}`,
      claim: "binding.endpoint_control",
    });
    expect(Date.parse(evidence.fresh_until)).toBe(Date.parse(verification.fresh_until));

    const { record } = await resolve(id);
    expect(record.bindings[0].verification).toEqual(verification);
    expect(record.evidence.find((e: Body) => e.id === verification.evidence).basis).toBe("observed");
  });

  it("DNS TXT through DNS over HTTPS: verified with the published record, not proven when the answer is missing", async () => {
    const caller = await Caller.create("editor");
    const host = uniqueHost("docs");
    const { id, bindingId } = await passportWith(caller, "api", "documentation", `https://${host}/guide`);
    const first = await verify(caller, id, bindingId);
    expect(first.reason).toContain(`no TXT record at _passport-identity.${host} (DNS status 3)`);

    await txt(first.instructions.dns_txt.name, ["v=spf1 -all"]);
    expect((await verify(caller, id, bindingId)).reason).toContain(`reads "${first.instructions.dns_txt.value}"`);

    await txt(first.instructions.dns_txt.name, ["v=spf1 -all", first.instructions.dns_txt.value]);
    const proven = await verify(caller, id, bindingId);
    expect(proven.result).toBe("verified");
    expect(proven.passport.bindings[0].verification.method).toBe("dns_txt");
  });

  it.each([
    ["manifest", "agent", "agent.manifest_control"],
    ["mcp_surface", "agent", "binding.mcp_surface_control"],
    ["openapi", "api", "binding.openapi_control"],
  ] as const)(
    "%s: verified when the fetched document names the identity, not when it names another",
    async (cls, family, claim) => {
      const caller = await Caller.create("editor");
      const host = uniqueHost(cls.replace("_", "-"));
      const url = `https://${host}/description.json`;
      const { id, bindingId } = await passportWith(caller, family, cls, url);
      const other = (await passportWith(caller, family, "environment", "production")).id;

      await serve(host, { "/description.json": json({ name: "Agent", passport: other }) });
      const wrong = await verify(caller, id, bindingId);
      expect(wrong.result).toBe("not_proven");
      expect(wrong.reason).toBe(`${url} does not name ${id} or its resolver URL`);
      expect(wrong.instructions.document).toEqual({ url, must_name: [id, expect.stringContaining(`/p/${id}`)] });

      await serve(host, {
        "/description.json": json({ name: "Agent", "x-passport": wrong.instructions.document.must_name[1] }),
      });
      const proven = await verify(caller, id, bindingId);
      expect(proven.result).toBe("verified");
      const { verification } = proven.passport.bindings[0];
      expect(verification.method).toBe("document_names_id");
      expect(proven.passport.evidence.find((e: Body) => e.id === verification.evidence)).toMatchObject({
        claim,
        scope: url,
        basis: "observed",
      });
    },
  );

  it("refuses what a hostile host answers: a redirect to another host, an oversized or slow answer, a wrong content type", async () => {
    const caller = await Caller.create("editor");
    const host = uniqueHost("agent");
    const url = `https://${host}/card.json`;
    const { id, bindingId } = await passportWith(caller, "agent", "manifest", url);
    const reasonFor = async (answer: Record<string, unknown>) => {
      await serve(host, { "/card.json": answer, "/moved.json": json({ id }) });
      const outcome = await verify(caller, id, bindingId);
      expect(outcome.result).toBe("not_proven");
      return outcome.reason as string;
    };
    expect(await reasonFor({ status: 302, location: `https://elsewhere.example.net/card.json` })).toContain(
      "redirects to another origin (https://elsewhere.example.net); not followed",
    );
    expect(await reasonFor({ content_type: "application/json", stream_bytes: 1024 * 1024 })).toBe(
      "the answer is larger than 131072 bytes",
    );
    expect(await reasonFor({ ...json({ id }), delay_ms: 10_000 })).toBe(
      `no complete answer from ${host} within 3000 ms`,
    );
    expect(await reasonFor({ content_type: "text/html", body: `<p>${id}</p>` })).toContain(
      "answered text/html, expected application/json",
    );
    // A same-origin location is still refused when it carries user information.
    expect(await reasonFor({ status: 302, location: `https://user:pw@${host}/moved.json` })).toContain(
      "redirects to a URL that is not checked: URLs with user information are not checked",
    );
    // A redirect within the same origin is followed.
    expect((await verify(caller, id, bindingId)).result).toBe("not_proven");
    await serve(host, { "/card.json": { status: 301, location: "/moved.json" }, "/moved.json": json({ id }) });
    const verified = await verify(caller, id, bindingId);
    expect(verified.result).toBe("verified");
    // The evidence names the bound URL, which a consumer compares with its target, not the redirect's end.
    const observed = verified.passport.evidence.find((e: Body) => e.basis === "observed");
    expect(observed?.scope).toBe(url);
  });

  it.each([
    ["http://plain.example.com/card.json", "only https URLs are checked, not http"],
    ["https://127.0.0.1/card.json", "IP address literals are not checked; bind a DNS name"],
    ["https://169.254.169.254/latest/meta-data.json", "IP address literals are not checked; bind a DNS name"],
    ["https://[::ffff:a9fe:a9fe]/card.json", "IP address literals are not checked; bind a DNS name"],
    ["https://metadata.google.internal/card.json", "metadata.google.internal is not a public host name"],
    ["https://metadata.google.internal./card.json", "metadata.google.internal is not a public host name"],
    ["https://localhost./card.json", "localhost is not a public host name"],
    ["https://intranet./card.json", "intranet is not a public host name"],
    ["https://hosts-sim.invalid./hosts/x", "hosts-sim.invalid is not a public host name"],
    ["https://intranet/card.json", "intranet is not a public host name"],
    ["https://hosts-sim.invalid/hosts/x", "hosts-sim.invalid is not a public host name"],
    ["https://resolver.test/api/p/x.json", "resolver.test is not a public host name"],
    ["https://agents.example.com:8443/card.json", "only the default https port is checked"],
  ])("never fetches %s", async (value, reason) => {
    const caller = await Caller.create("editor");
    const { id, bindingId } = await passportWith(caller, "agent", "manifest", value);
    const outcome = await verify(caller, id, bindingId);
    expect(outcome.result).toBe("not_proven");
    expect(outcome.reason).toContain(reason);
  });

  it("keeps classes the service cannot check claimed, saying why", async () => {
    const caller = await Caller.create("editor");
    const { id, bindingId } = await passportWith(
      caller,
      "api",
      "gateway",
      "arn:aws:apigateway:eu-west-1::/restapis/abc",
    );
    const outcome = await verify(caller, id, bindingId);
    expect(outcome.result).toBe("not_proven");
    expect(outcome.instructions.unprovable).toContain("provider's own statement");
    expect(outcome.passport.bindings[0].verification).toEqual({ state: "claimed" });
  });

  it("two checks of one passport at once never fail with a server error: each is verified or told to check again", async () => {
    const caller = await Caller.create("editor");
    const host = uniqueHost("agent");
    const passport = await caller.createPassport({
      family: "agent",
      bindings: [
        { class: "manifest", value: `https://${host}/a.json` },
        { class: "manifest", value: `https://${host}/b.json` },
      ],
    });
    await serve(host, { "/a.json": json({ id: passport.identity_id }), "/b.json": json({ id: passport.identity_id }) });
    const responses = await Promise.all(
      passport.bindings.map((b: Body) =>
        caller.request("POST", `/v1/passports/${passport.identity_id}/bindings/${b.id}/verify`),
      ),
    );
    for (const response of responses) {
      expect([200, 412]).toContain(response.status);
      if (response.status === 412) {
        expect(await response.json()).toMatchObject({ type: "urn:svc:passport:problem:precondition-failed" });
      }
    }
    const history = await caller.json("GET", `/v1/passports/${passport.identity_id}/history`);
    const versions = history.items.map((e: Body) => e.record_version);
    expect(new Set(versions).size).toBe(versions.length);
  });

  it("lets only editors of the passport's organisation run a check", async () => {
    const owner = await Caller.create("owner");
    const { id, bindingId } = await passportWith(owner, "api", "endpoint", `https://${uniqueHost()}/v1`);
    const viewer = await Caller.create("viewer", owner.organisation);
    expect((await viewer.request("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`)).status).toBe(403);
    const stranger = await Caller.create("owner");
    expect((await stranger.request("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`)).status).toBe(404);
  });
});

describe("outbound policy", () => {
  const production = {
    allowLoopbackHttp: false,
    ownHosts: ["resolver.passport.example.org", "dashboard.passport.example.org"],
    timeoutMs: 3000,
    maxBytes: 1024,
    maxRedirects: 3,
  };

  it("refuses the service's own hosts and, in production, loopback over plain http", () => {
    expect(refusal(new URL("https://resolver.passport.example.org/api/p/x.json"), production)).toBe(
      "resolver.passport.example.org is this service's own host",
    );
    expect(refusal(new URL("http://127.0.0.1:8787/x"), production)).toBe("only https URLs are checked, not http");
    expect(refusal(new URL("http://127.0.0.1:8787/x"), { ...production, allowLoopbackHttp: true })).toBeUndefined();
    expect(refusal(new URL("https://user:pw@agents.example.com/"), production)).toBe(
      "URLs with user information are not checked",
    );
    expect(refusal(new URL("https://agents.example.com/card.json"), production)).toBeUndefined();
  });

  it("compares the name DNS resolves: a trailing dot changes nothing", () => {
    expect(refusal(new URL("https://resolver.passport.example.org./api/p/x.json"), production)).toBe(
      "resolver.passport.example.org is this service's own host",
    );
    expect(refusal(new URL("https://Dashboard.Passport.Example.org./"), production)).toBe(
      "dashboard.passport.example.org is this service's own host",
    );
    expect(refusal(new URL("https://localhost./"), production)).toBe("localhost is not a public host name");
    expect(refusal(new URL("https://metadata.google.internal./"), production)).toBe(
      "metadata.google.internal is not a public host name",
    );
    expect(refusal(new URL("https://localhost../"), production)).toBe("localhost.. is not a public host name");
    expect(refusal(new URL("https://agents.example.com./card.json"), production)).toBeUndefined();
    expect(
      refusal(new URL("https://resolver.passport.example.org/"), {
        ...production,
        ownHosts: ["resolver.passport.example.org."],
      }),
    ).toBe("resolver.passport.example.org is this service's own host");
  });
});

describe("re-verification", () => {
  it("renews a proof that still holds and lapses one that no longer does, with the reason in the history, record and index", async () => {
    const caller = await Caller.create("editor");
    const host = uniqueHost("agent");
    const manifest = `https://${host}/card.json`;
    const { id, bindingId } = await passportWith(caller, "agent", "manifest", manifest);
    await serve(host, { "/card.json": json({ passport: id }) });
    const proven = await verify(caller, id, bindingId);
    const firstProof = proven.passport.bindings[0].verification;
    expect(await claimantsOf(manifest)).toEqual([id]);

    // Five days on, the proof ends within the re-check window: the host still names the passport.
    const later = new Date(Date.parse(firstProof.verified_at) + 5 * 24 * 3600 * 1000);
    await recheckAt(later);
    const renewed = (await resolve(id)).record.bindings[0].verification;
    expect(renewed.state).toBe("verified");
    expect(renewed.evidence).not.toBe(firstProof.evidence);

    // The host stops naming it: the next re-check lapses the binding.
    await serve(host, { "/card.json": json({ passport: "someone else" }) });
    await recheckAt(new Date(Date.parse(renewed.fresh_until) - 3600 * 1000));
    const { record } = await resolve(id);
    expect(record.bindings[0].verification).toMatchObject({
      state: "lapsed",
      method: "document_names_id",
      reason: `${manifest} does not name ${id} or its resolver URL`,
    });
    // The proof's evidence is withdrawn with it, and the manifest leaves the index.
    expect(record.evidence.some((e: Body) => e.id === renewed.evidence)).toBe(false);
    expect(await claimantsOf(manifest)).toEqual([]);
    const history = await caller.json("GET", `/v1/passports/${id}/history`);
    expect(history.items.at(-1)).toMatchObject({
      kind: "binding.lapsed",
      detail: { binding_id: bindingId, reason: `${manifest} does not name ${id} or its resolver URL` },
    });
  });
});
