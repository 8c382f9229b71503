// Issue 13 item 7: a verifier that does not trust by default. Records in the proven-bindings shape
// (docs/record-format.md), signed with a key of the test's own, exercise every binding state and
// evidence basis; the real resolver's records are covered by the other files.
import { describe, expect, it } from "vitest";
import { strictJsonParse } from "../../packages/protocol/src/strict-json.ts";
import { EXIT } from "../../packages/verifier/src/cli/args.ts";
import { run } from "../../packages/verifier/src/cli/main.ts";
import { type FetchLike, Verifier } from "../../packages/verifier/src/index.ts";
import {
  ATTESTED,
  asserted,
  CONTRACT_RESOLVER,
  type ContractRecord,
  contractRecord,
  NOW,
  observed,
  RecordServer,
  verified,
} from "./support.ts";

const TARGET = "https://api.contract.example/v1/charges";

async function served(record: ContractRecord = contractRecord()) {
  const server = await RecordServer.create();
  const published = await server.publish(record);
  return { server, id: published.identity_id, published };
}

describe("binding match: only verified bindings count", () => {
  it("ok: the base URL lies under an endpoint binding the service verified, with its observed evidence", async () => {
    const { server, id } = await served();
    const result = await server.verifier().verify(id, { family: "api", baseUrl: TARGET });
    expect(result.outcome).toBe("ok");
    expect(result.relied_on.bindings).toEqual([
      expect.objectContaining({
        value: "https://api.contract.example/v1",
        verification: expect.objectContaining({ state: "verified" }),
      }),
    ]);
  });

  it("binding_unverified: a binding without verification (a record from before proofs) is only claimed", async () => {
    const record = contractRecord();
    delete record.bindings[0]?.verification;
    const { server, id } = await served(record);
    const result = await server.verifier().verify(id, { baseUrl: TARGET });
    expect(result).toMatchObject({
      outcome: "binding_unverified",
      ok: false,
      next_step: "challenge",
      unverified: [{ class: "endpoint", value: "https://api.contract.example/v1", state: "claimed" }],
    });
  });

  it("binding_unverified: a claimed binding, a lapsed one (with its reason), and a verified one past fresh_until", async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ state: "claimed" }, "claimed", /not proven/],
      [
        {
          state: "lapsed",
          method: "http_well_known",
          lapsed_at: "2026-11-22T00:00:00Z",
          reason: "well-known document no longer names the identity id",
        },
        "lapsed",
        /no longer names the identity id/,
      ],
      [verified("evd_endpoint", -1), "lapsed", /fresh only until/],
    ];
    for (const [verification, state, problem] of cases) {
      const record = contractRecord();
      (record.bindings[0] as Record<string, unknown>).verification = verification;
      const { server, id } = await served(record);
      const result = await server.verifier().verify(id, { baseUrl: TARGET });
      expect(result.outcome).toBe("binding_unverified");
      if (result.outcome !== "binding_unverified") continue;
      expect(result.unverified[0]?.state).toBe(state);
      expect(result.unverified[0]?.problem).toMatch(problem);
    }
  });

  it("binding_unverified: 'verified' without proof behind it: evidence absent, asserted, expired, or for another origin", async () => {
    const proofs: [Record<string, unknown>[], RegExp][] = [
      [[], /not in the record/],
      [[asserted("evd_endpoint", "agent.endpoint_control", { trusted_source: true })], /not observed/],
      [[observed("evd_endpoint", "agent.endpoint_control", "https://api.contract.example", -1)], /fresh only until/],
      [
        [observed("evd_endpoint", "agent.endpoint_control", "https://other.example")],
        /observed for https:\/\/other\.example/,
      ],
    ];
    for (const [evidence, problem] of proofs) {
      const { server, id } = await served(contractRecord({ evidence }));
      const result = await server.verifier().verify(id, { baseUrl: TARGET });
      expect(result.outcome).toBe("binding_unverified");
      if (result.outcome === "binding_unverified") expect(result.unverified[0]?.problem).toMatch(problem);
    }
  });

  it("a binding verified through DNS counts: its evidence's scope is the TXT record checked under the bound host", async () => {
    const record = contractRecord({
      evidence: [observed("evd_endpoint", "binding.endpoint_control", "_passport.api.contract.example TXT")],
    });
    (record.bindings[0] as Record<string, unknown>).verification = { ...verified("evd_endpoint"), method: "dns_txt" };
    const { server, id } = await served(record);
    expect((await server.verifier().verify(id, { baseUrl: TARGET })).outcome).toBe("ok");

    record.evidence = [observed("evd_endpoint", "binding.endpoint_control", "_passport.elsewhere.example TXT")];
    const other = await served(record);
    expect((await other.server.verifier().verify(other.id, { baseUrl: TARGET })).outcome).toBe("binding_unverified");
  });

  it("a manifest target matches only a verified manifest binding; a second, unproven copy does not stand in", async () => {
    const manifest = "https://agents.contract.example/.well-known/agent.json";
    const record = contractRecord({
      family: "agent",
      bindings: [
        { class: "manifest", value: manifest, bound_at: "2026-11-01T00:00:00Z", verification: { state: "claimed" } },
      ],
      evidence: [],
    });
    const claimed = await served(record);
    const refused = await claimed.server
      .verifier()
      .verify(claimed.id, { bindings: [{ class: "manifest", value: manifest }] });
    expect(refused.outcome).toBe("binding_unverified");

    record.bindings = [
      {
        class: "manifest",
        value: manifest,
        bound_at: "2026-11-01T00:00:00Z",
        verification: { ...verified("evd_manifest"), method: "document_names_id" },
      },
    ];
    record.evidence = [observed("evd_manifest", "agent.manifest_control", manifest)];
    const proven = await served(record);
    const ok = await proven.server.verifier().verify(proven.id, { bindings: [{ class: "manifest", value: manifest }] });
    expect(ok.outcome).toBe("ok");
  });

  it("an address not bound at all is binding_mismatch, which comes before binding_unverified", async () => {
    const record = contractRecord();
    (record.bindings[0] as Record<string, unknown>).verification = { state: "claimed" };
    const { server, id } = await served(record);
    const result = await server.verifier().verify(id, {
      baseUrl: TARGET,
      bindings: [{ class: "openapi" }],
    });
    expect(result.outcome).toBe("binding_mismatch");
    expect(result.findings.map((f) => f.outcome)).toEqual(["binding_mismatch", "binding_unverified"]);
  });
});

describe("required evidence: source and scope, not only claim and freshness", () => {
  const claim = "organisation.domain_control";

  it("asserted evidence from a source the operator does not trust does not establish a claim, and is named", async () => {
    const { server, id } = await served(
      contractRecord({
        evidence: [...contractRecord().evidence, asserted("evd_self", claim, { source: "our own audit" })],
      }),
    );
    const result = await server.verifier().verify(id, { evidence: [claim] });
    expect(result).toMatchObject({
      outcome: "missing_evidence",
      missing_claims: [claim],
      not_counted: [{ evidence_id: "evd_self", basis: "asserted", source: "our own audit", why: "not_observed" }],
    });
  });

  it("asserted evidence marked trusted without an attester (a typed source name) does not establish it", async () => {
    const { server, id } = await served(
      contractRecord({
        evidence: [...contractRecord().evidence, asserted("evd_named", claim, { trusted_source: true })],
      }),
    );
    const result = await server.verifier().verify(id, { evidence: [claim] });
    expect(result).toMatchObject({
      outcome: "missing_evidence",
      missing_claims: [claim],
      not_counted: [{ evidence_id: "evd_named", basis: "asserted", why: "not_observed" }],
    });
  });

  it("observed evidence, or asserted evidence from a trusted source, establishes it", async () => {
    for (const item of [observed("evd_dns", claim, "contract.example"), asserted("evd_auditor", claim, ATTESTED)]) {
      const { server, id } = await served(contractRecord({ evidence: [...contractRecord().evidence, item] }));
      const result = await server.verifier().verify(id, { baseUrl: TARGET, evidence: [{ claim, maxAge: "30d" }] });
      expect(result.outcome).toBe("ok");
      expect(result.relied_on.evidence).toEqual([expect.objectContaining({ id: item.id })]);
    }
  });

  it("observed evidence whose scope does not cover the target does not count for it", async () => {
    const { server, id } = await served(
      contractRecord({ evidence: [...contractRecord().evidence, observed("evd_dns", claim, "elsewhere.example")] }),
    );
    const result = await server.verifier().verify(id, { baseUrl: TARGET, evidence: [claim] });
    expect(result).toMatchObject({
      outcome: "missing_evidence",
      not_counted: [{ evidence_id: "evd_dns", scope: "elsewhere.example", why: "out_of_scope" }],
    });
  });

  it("observed evidence past its fresh_until is stale, not missing", async () => {
    const { server, id } = await served(
      contractRecord({ evidence: [...contractRecord().evidence, observed("evd_dns", claim, "contract.example", -2)] }),
    );
    const result = await server.verifier().verify(id, { evidence: [claim] });
    expect(result).toMatchObject({ outcome: "stale", stale: [{ what: "evidence", evidence_id: "evd_dns" }] });
  });
});

describe("signatures are required unless the caller loudly opts out", () => {
  it("a verifier without keys is refused when it is built; with skip-insecure a passing check is never ok", async () => {
    const { server, id } = await served();
    expect(() => new Verifier({ resolver: CONTRACT_RESOLVER })).toThrow(/jwks is required/);
    expect(() => new Verifier({ resolver: CONTRACT_RESOLVER, jwks: server.jwks, signature: "skip-insecure" })).toThrow(
      /contradict/,
    );

    const insecure = new Verifier({
      resolver: CONTRACT_RESOLVER,
      fetch: server.fetch,
      signature: "skip-insecure",
      now: () => NOW,
    });
    const result = await insecure.verify(id, { baseUrl: TARGET });
    expect(result).toMatchObject({
      outcome: "ok_signature_skipped",
      ok: false,
      next_step: "challenge",
      proof: { signature: "skipped_insecure" },
    });
  });

  it("an unsigned record fails as signature_invalid (missing), and one signed by another key as unknown_key", async () => {
    const { server, id, published } = await served();
    server.serveRaw(id, JSON.stringify(published));
    expect(await server.verifier().verify(id)).toMatchObject({ outcome: "signature_invalid", kind: "missing" });

    const other = await RecordServer.create("someone-elses-key");
    server.serveRaw(id, JSON.stringify(published), await other.sign(published));
    expect(await server.verifier().verify(id)).toMatchObject({ outcome: "unknown_key", kid: "someone-elses-key" });
  });

  it("a record with a repeated member name is refused before its signature, even one that verifies", async () => {
    const { server, id, published } = await served();
    // JSON.parse keeps the last "state": the signed reading is active; another parser reads revoked.
    const text = JSON.stringify(published).replace(
      '"state":{"lifecycle"',
      '"state":{"lifecycle":"revoked"},"state":{"lifecycle"',
    );
    expect(JSON.parse(text)).toEqual(published);
    server.serveRaw(id, text, await server.sign(published));
    const result = await server.verifier().verify(id);
    expect(result).toMatchObject({
      outcome: "signature_invalid",
      kind: "duplicate_member",
      relied_on: {},
      detail: 'duplicate member name "state" at the top level',
    });
  });
});

describe("strict JSON", () => {
  it("finds a repeated member name at any depth, including one spelled with escapes", () => {
    expect(strictJsonParse('{"a":1,"b":{"c":[{"d":1,"d":2}]}}')).toMatchObject({
      ok: false,
      kind: "duplicate_member",
      problem: 'duplicate member name "d" at b.c[0]',
    });
    expect(strictJsonParse('{"lifecycle":"revoked","lif\\u0065cycle":"active"}')).toMatchObject({
      kind: "duplicate_member",
    });
    expect(strictJsonParse('{"a":{"x":1},"b":{"x":1},"s":"\\"a\\":1,\\"a\\""}')).toEqual({
      ok: true,
      value: { a: { x: 1 }, b: { x: 1 }, s: '"a":1,"a"' },
    });
    expect(strictJsonParse(`${"[".repeat(100)}${"]".repeat(100)}`)).toMatchObject({ kind: "too_deep" });
    expect(strictJsonParse("{")).toMatchObject({ kind: "not_json" });
  });
});

describe("transport: https only, no redirect to another origin, bounded answers", () => {
  it("refuses a plain-http resolver or key set URL unless it is a loopback address", () => {
    const jwks = { keys: [] };
    expect(() => new Verifier({ resolver: "http://resolver.example", jwks })).toThrow(/not https/);
    expect(() => new Verifier({ resolver: "https://resolver.example", jwks: "http://keys.example/jwks.json" })).toThrow(
      /jwks: .* not https/,
    );
    expect(() => new Verifier({ resolver: "https://user:pw@resolver.example", jwks })).toThrow(/user information/);
    for (const loopback of ["http://127.0.0.1:8787", "http://localhost:8787", "http://[::1]:8787"]) {
      expect(new Verifier({ resolver: loopback, jwks }).resolver).toBe(loopback);
    }
  });

  it("follows a redirect within the resolver's origin, and refuses one to another origin", async () => {
    const { server, id } = await served();
    const redirecting =
      (location: string): FetchLike =>
      async (input, init) => {
        if (new URL(input).pathname.startsWith("/old/")) {
          expect(init?.redirect).toBe("manual");
          return new Response(null, { status: 302, headers: { location } });
        }
        return server.fetch(input, init);
      };
    const verifier = (location: string) =>
      new Verifier({
        resolver: `${CONTRACT_RESOLVER}/old`,
        fetch: redirecting(location),
        jwks: server.jwks,
        retries: 0,
        now: () => NOW,
      });
    expect((await verifier(`${CONTRACT_RESOLVER}/api/p/${id}.json`).resolve(id)).outcome).toBe("resolved");
    const away = await verifier(`https://evil.example/api/p/${id}.json`).resolve(id);
    expect(away).toMatchObject({ outcome: "network_failure", kind: "unexpected_response" });
    if (away.outcome === "network_failure")
      expect(away.detail).toContain("redirected to another origin (https://evil.example)");
  });

  it("refuses an answer larger than the cap, declared or streamed", async () => {
    const { server, id } = await served(contractRecord({ display_name: "x".repeat(4000) }));
    const small = await server.verifier({ maxBytes: 2048, retries: 0 }).resolve(id);
    expect(small).toMatchObject({ outcome: "network_failure", kind: "unexpected_response" });
    if (small.outcome === "network_failure") expect(small.detail).toContain("larger than 2048 bytes");

    const streamed: FetchLike = async (input, init) => {
      const answer = await server.fetch(input, init);
      const body = answer.body?.pipeThrough(new TransformStream());
      const headers = new Headers(answer.headers);
      headers.delete("content-length");
      return new Response(body, { status: answer.status, headers });
    };
    const capped = await server.verifier({ fetch: streamed, maxBytes: 2048, retries: 0 }).resolve(id);
    expect(capped).toMatchObject({ outcome: "network_failure" });
    expect((await server.verifier({ fetch: streamed }).resolve(id)).outcome).toBe("resolved");
  });
});

describe("passport verify: keys or an explicit opt-out", () => {
  async function passport(server: RecordServer, args: string[], files: Record<string, string> = {}) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run([...args, "--resolver", CONTRACT_RESOLVER], {
      stdout: (text) => out.push(text),
      stderr: (text) => err.push(text),
      env: {},
      fetch: server.fetch,
      readFile: async (path) => {
        const text = files[path];
        if (text === undefined) throw new Error("ENOENT");
        return text;
      },
    });
    return { code, stdout: out.join("\n"), stderr: err.join("\n") };
  }

  it("needs --jwks or --insecure-no-signature; the opt-out warns and exits 5, never 0", async () => {
    const { server, id } = await served();
    const none = await passport(server, ["verify", id]);
    expect(none.code).toBe(EXIT.usage);
    expect(none.stderr).toContain("--insecure-no-signature");
    expect((await passport(server, ["verify", id, "--jwks", "http://keys.example/jwks.json"])).code).toBe(EXIT.usage);

    const insecure = await passport(server, ["verify", id, "--insecure-no-signature"]);
    expect(insecure.code).toBe(EXIT.unsigned);
    expect(insecure.stdout).toMatch(/^INSECURE\s+ok_signature_skipped/);
    expect(insecure.stdout).toContain("signature NOT CHECKED");
    expect(insecure.stderr).toContain("WARNING --insecure-no-signature");

    const found = await passport(server, ["resolve", id, "--insecure-no-signature"]);
    expect(found.code).toBe(EXIT.unsigned);
    expect(found.stdout).toMatch(/^FOUND UNSIGNED\s+psp_/);
  });

  it("reports an unproven binding as binding_unverified (exit 1), and shows each binding's state", async () => {
    const record = contractRecord();
    (record.bindings[0] as Record<string, unknown>).verification = { state: "claimed" };
    const { server, id } = await served(record);
    const files = { "keys.json": JSON.stringify(server.jwks) };
    const result = await passport(server, ["verify", id, "--jwks", "keys.json", "--base-url", TARGET], files);
    expect(result.code).toBe(EXIT.failed);
    expect(result.stdout).toMatch(/^FAIL\s+binding_unverified/);
    expect(result.stdout).toContain("Unverified: endpoint https://api.contract.example/v1 (claimed)");

    const shown = await passport(server, ["resolve", id, "--jwks", "keys.json"], files);
    expect(shown.stdout).toContain("endpoint https://api.contract.example/v1  [claimed]");
  });
});
