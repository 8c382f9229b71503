import { deriveEnvelope, mintIdentityId, type PassportRecord, parseEnvelopeTarget } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { EXIT } from "../../packages/verifier/src/cli/args.ts";
import { run } from "../../packages/verifier/src/cli/main.ts";
import { USAGE } from "../../packages/verifier/src/cli/usage.ts";
import { type FetchLike, OUTCOME_KINDS } from "../../packages/verifier/src/index.ts";
import { Owner, pinnedKeys, RESOLVER, resolverFetch } from "./support.ts";

/** Runs the CLI; `resolve` and `verify` get the pinned key set as `--jwks keys.json` unless told otherwise. */
async function passport(args: string[], fetch: FetchLike = resolverFetch) {
  const out: string[] = [];
  const err: string[] = [];
  const keyed = ["resolve", "verify"].includes(args[0] ?? "") && !args.includes("--insecure-no-signature");
  const code = await run(keyed && !args.includes("--jwks") ? [...args, "--jwks", "keys.json"] : args, {
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    env: { PASSPORT_RESOLVER: RESOLVER },
    fetch,
    readFile: async (path) => {
      if (path !== "keys.json") throw new Error("ENOENT");
      return JSON.stringify(pinnedKeys());
    },
  });
  return { code, stdout: out.join("\n"), stderr: err.join("\n") };
}

describe("passport CLI against the real resolver", () => {
  it("verify: a readable summary and exit 0 for a passport that meets the expectation", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const args = ["verify", id, "--family", "api", "--env", "production", "--org", owner.organisation];
    const result = await passport([...args, "--consequence", "higher"]);
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout).toMatch(new RegExp(`^OK\\s+ok\\s+${id}`));
    expect(result.stdout).toContain("Next step:  proceed");
    expect(result.stdout).toContain("Not checked: version, bindings, evidence, maximum record age");
    expect(result.stdout).toContain("signature verified");
    expect(result.stdout).toContain("Identity is not authorization");
  });

  it("verify --base-url: an endpoint the owner only typed in is binding_unverified (exit 1), never ok", async () => {
    const owner = await Owner.create();
    const { id, endpoint } = await owner.apiPassport();
    const result = await passport(["verify", id, "--family", "api", "--base-url", endpoint]);
    expect(result.code).toBe(EXIT.failed);
    expect(result.stdout).toMatch(new RegExp(`^FAIL\\s+binding_unverified\\s+${id}`));
    expect(result.stdout).toContain(`Unverified: endpoint ${endpoint} (claimed)`);
    expect(result.stdout).toContain("Next step:  challenge");
  });

  it("verify --json: the outcome object, and exit 1 for a failed check", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    await owner.state(id, { lifecycle: "suspended" });
    const result = await passport(["verify", id, "--json", "--require-evidence", "organisation.domain_control:30d"]);
    expect(result.code).toBe(EXIT.failed);
    const outcome = JSON.parse(result.stdout);
    expect(outcome).toMatchObject({
      outcome: "state_not_operative",
      next_step: "delay",
      identity_is_not_authorization: true,
      findings: [{ outcome: "state_not_operative" }, { outcome: "missing_evidence" }],
    });
  });

  it("exit 1 for unknown and mistyped ids, with the class named", async () => {
    const unknown = await passport(["verify", mintIdentityId()]);
    expect(unknown.code).toBe(EXIT.failed);
    expect(unknown.stdout).toMatch(/^FAIL\s+not_found/);
    const mistyped = await passport(["resolve", "psp_k03khmq2ren546nj2zrpdtsmd"]);
    expect(mistyped.code).toBe(EXIT.failed);
    expect(mistyped.stdout).toMatch(/^FAIL\s+malformed_id/);
  });

  it("exit 3 when the proof cannot be fetched", async () => {
    const down: FetchLike = () => Promise.reject(new TypeError("fetch failed"));
    const result = await passport(["verify", mintIdentityId(), "--retries", "0"], down);
    expect(result.code).toBe(EXIT.network);
    expect(result.stdout).toMatch(/^FAIL\s+network_failure/);
    expect(result.stderr).toBe(
      `passport: the resolver tried was ${RESOLVER} (PASSPORT_RESOLVER); check that it answers there, or name another with --resolver URL or PASSPORT_RESOLVER.`,
    );
  });

  it("resolve: prints the record and exits 0", async () => {
    const owner = await Owner.create();
    const { id, endpoint } = await owner.apiPassport();
    const result = await passport(["resolve", id]);
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout).toContain(`FOUND  ${id}`);
    expect(result.stdout).toContain(`endpoint ${endpoint}  [claimed]`);
    expect(result.stdout).toContain("active, environment production, version 2026-10");
  });

  it("envelope: a resolver without the envelope route is reported as unavailable (exit 3), not as a verdict", async () => {
    const result = await passport([
      "envelope",
      "https://agents.example/support/agent-card.json",
      "--resolver",
      `${RESOLVER}/no-envelope-here`,
    ]);
    expect(result.code).toBe(EXIT.network);
    expect(result.stdout).toMatch(/^UNAVAILABLE/);
    expect(result.stdout).toContain("/api/agent-envelope answered 404");
  });

  it("envelope: an envelope derived by the service's own rules from a real agent record is summarised (exit 0)", async () => {
    const owner = await Owner.create();
    const agent = await owner.caller.createPassport({
      family: "agent",
      bindings: [{ class: "manifest", value: `https://${crypto.randomUUID().slice(0, 8)}.agents.example/card.json` }],
    });
    // Until the resolver serves /api/agent-envelope, answer it here with the domain's derivation
    // over the record the real resolver publishes; every other request goes to the resolver.
    const withEnvelopeRoute: FetchLike = async (input, init) => {
      const url = new URL(input);
      if (url.pathname !== "/api/agent-envelope") return resolverFetch(input, init);
      const target = url.searchParams.get("target") ?? "";
      const record = (await (await resolverFetch(`${RESOLVER}/api/p/${target}.json`)).json()) as PassportRecord;
      const envelope = deriveEnvelope({
        target,
        parsed: parseEnvelopeTarget(target) ?? { kind: "identity", identityId: target },
        records: [record],
        policy: { requiredClaims: ["agent.operator_verified"] },
        resolverBaseUrl: RESOLVER,
        developerGuidanceUrl: `${RESOLVER}/docs`,
        now: new Date(),
      });
      return Response.json(envelope);
    };
    const result = await passport(["envelope", agent.identity_id], withEnvelopeRoute);
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout).toMatch(new RegExp(`^ENVELOPE\\s+${agent.identity_id}`));
    expect(result.stdout).toContain("Missing evidence: agent.operator_verified");
    expect(result.stdout).toContain("The envelope grants nothing.");
  });

  it.each([
    [[], "help", EXIT.ok],
    [["verify"], "needs an identity id", EXIT.usage],
    [["verify", "psp_x", "--family", "robot"], "--family must be api or agent", EXIT.usage],
    [["verify", "psp_x", "--colour"], "Unknown option", EXIT.usage],
    [["resolve", "psp_x", "--env", "production"], "--env applies to verify only", EXIT.usage],
    [["verify", "psp_x", "--max-age", "soon"], "--max-age", EXIT.usage],
    [["verify", "psp_x", "--resolver", "ftp://resolver"], "is not https", EXIT.usage],
    [["verify", "psp_x", "--resolver", "http://resolver.example"], "plain http only to a loopback address", EXIT.usage],
    [["verify", "psp_x", "--insecure-no-signature", "--jwks", "k.json"], "contradict", EXIT.usage],
    [["envelope", "agent-card.json"], "http(s) agent manifest URL", EXIT.usage],
    [["frobnicate", "x"], 'unknown command "frobnicate"', EXIT.usage],
    [["verify-card"], "needs the agent card's URL", EXIT.usage],
    [["verify-card", "https://agent.example/card.json"], "verify-card needs --jwks", EXIT.usage],
    [["verify-card", "http://agent.example/card.json", "--jwks", "k.json"], "plain http only", EXIT.usage],
    [["verify-card", "https://agent.example/card.json", "agent", "--jwks", "k.json"], "not an identity id", EXIT.usage],
    [["verify-card", "https://a.example/c.json", "--env", "x", "--jwks", "k.json"], "does not apply", EXIT.usage],
  ])("usage: %j -> %s (exit %i)", async (args, message, code) => {
    const result = await passport(args);
    expect(result.code).toBe(code);
    expect(code === EXIT.ok ? result.stdout : result.stderr).toContain(message);
  });
});

describe("passport help", () => {
  it("names under exit 4 every outcome that disproves the proof, and no other", () => {
    const exitCodes = USAGE.slice(USAGE.indexOf("Exit codes:"));
    const proofFailed = exitCodes.slice(exitCodes.indexOf("4 proof failed"), exitCodes.indexOf("while"));
    for (const [outcome, kind] of Object.entries(OUTCOME_KINDS)) {
      expect(new RegExp(`\\b${outcome}\\b`).test(proofFailed), outcome).toBe(kind === "disproved");
    }
  });
});
