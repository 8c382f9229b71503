// The second "Done when": the local service started exactly as `npm start` starts it,
// then the `passport` CLI, run by Node as a user runs it, against its demo data.
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Hono } from "hono";
import { describe, expect, inject, it } from "vitest";
import { mintIdentityId } from "../../../packages/protocol/src/identity-id.ts";
import { formatVerifierKey } from "../../../packages/protocol/src/log/note.ts";
import { passportStatus } from "../../../packages/verifier/src/hono.ts";

import { freePort, root } from "../../local-service.ts";

const bin = join(root, "packages", "verifier", "src", "cli", "bin.ts");
const run = promisify(execFile);

const service = inject("service");

/** The key set a consumer pins; here read from the local resolver (plain http is allowed to loopback only). */
const keys = () => `${service.resolver}/.well-known/jwks.json`;

/**
 * Runs the CLI the way its `bin` runs it, trusting the local service's keys unless the arguments
 * say otherwise; returns exit code and output.
 */
async function passport(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const keyed = ["resolve", "verify"].includes(args[0] ?? "") && !args.includes("--insecure-no-signature");
  const argv = keyed && !args.includes("--jwks") ? [...args, "--jwks", keys()] : args;
  try {
    const { stdout, stderr } = await run(process.execPath, ["--experimental-strip-types", bin, ...argv], {
      cwd: root,
      env: { ...process.env, PASSPORT_RESOLVER: service.resolver },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function dashboard(method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${service.control}${path}`, {
    method,
    headers: { authorization: `Bearer ${service.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

function payments(): string {
  const found = service.demo.find((p) => p.name === "Demo Payments API");
  if (!found) throw new Error("the demo payments passport is missing from the start output");
  return found.id;
}

describe("passport CLI against the local service (npm start)", () => {
  const production = ["--family", "api", "--org", "org_demo", "--env", "production", "--version", "2026-10"];

  it("ok: the demo API passport meets a production pre-call expectation, its signature checked (exit 0)", async () => {
    const result = await passport("verify", payments(), ...production, "--consequence", "higher");
    expect(result.stdout).toMatch(/^OK\s+ok\s+psp_/);
    expect(result.stdout).toContain("signature verified");
    expect(result.code).toBe(0);
  });

  it("decides on the demo agent's structured grant: a refund within it is allowed, one beyond it denied", async () => {
    const agent = service.demo.find((p) => p.name === "Demo Support Agent");
    if (!agent) throw new Error("the demo agent is missing from the start output");
    const folder = mkdtempSync(join(tmpdir(), "passport-policy-"));
    const policy = join(folder, "policy.json");
    writeFileSync(
      policy,
      JSON.stringify({
        policy_format: "svc.passport_policy",
        version: 1,
        actions: { refund: { family: "agent", organisations: ["org_demo"], authority: { action: "payments.refund" } } },
      }),
    );
    const decide = (amount: string) =>
      passport(
        "verify",
        agent.id,
        "--policy",
        policy,
        "--action",
        "refund",
        "--amount",
        amount,
        "--resource",
        "org:demo/customers/7",
        "--json",
      );
    const within = await decide("50.00:EUR");
    expect(within.code).toBe(0);
    expect(JSON.parse(within.stdout)).toMatchObject({ decision: "allow", authority: { result: "held" } });
    const beyond = await decide("150.00:EUR");
    expect(beyond.code).toBe(1);
    expect(JSON.parse(beyond.stdout)).toMatchObject({ decision: "deny", authority: { result: "not_held" } });
  });

  it("a base URL or binding the service has not verified is binding_unverified, never ok (exit 1)", async () => {
    const result = await passport(
      "verify",
      payments(),
      ...production,
      "--base-url",
      "https://payments.demo.example/v1/charges",
      "--require-binding",
      "openapi",
      "--json",
    );
    expect(result.code).toBe(1);
    const outcome = JSON.parse(result.stdout);
    expect(outcome).toMatchObject({ outcome: "binding_unverified", next_step: "challenge" });
    expect(outcome.unverified.map((u: { class: string }) => u.class).sort()).toEqual(["endpoint", "openapi"]);
  });

  it("without keys: a usage error, and the explicit opt-out is never ok (exit 5)", async () => {
    const unkeyed = await run(process.execPath, ["--experimental-strip-types", bin, "verify", payments()], {
      cwd: root,
      env: { ...process.env, PASSPORT_RESOLVER: service.resolver },
    }).catch((error: { code: number; stderr: string }) => error);
    expect(unkeyed).toMatchObject({ code: 2 });
    const insecure = await passport("verify", payments(), ...production, "--insecure-no-signature");
    expect(insecure.code).toBe(5);
    expect(insecure.stdout).toMatch(/^INSECURE\s+ok_signature_skipped/);
    expect(insecure.stderr).toContain("WARNING --insecure-no-signature");
  });

  it("a suspended passport fails with state_not_operative (exit 1)", async () => {
    const created = await dashboard("POST", "/v1/passports", {
      organisation_id: "org_demo",
      family: "api",
      display_name: "Verifier integration test (suspended)",
      environment: "production",
      bindings: [{ class: "endpoint", value: `https://it-${crypto.randomUUID().slice(0, 8)}.demo.example/v1` }],
    });
    const id = created.identity_id as string;
    await dashboard("PATCH", `/v1/passports/${id}/state`, {
      lifecycle: "suspended",
      reason: "verifier integration test",
    });
    const result = await passport("verify", id, "--family", "api", "--json");
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({
      outcome: "state_not_operative",
      state: { lifecycle: "suspended" },
      next_step: "delay",
    });
  });

  it("right after a revocation, higher consequence is never ok; the copy from before it is stale, fed as a file or stapled", async () => {
    const created = await dashboard("POST", "/v1/passports", {
      organisation_id: "org_demo",
      family: "api",
      display_name: "Verifier integration test (revoked)",
      environment: "production",
    });
    const id = created.identity_id as string;
    const before = await fetch(`${service.resolver}/api/p/${id}.json`);
    const dir = mkdtempSync(join(tmpdir(), "passport-cli-"));
    const recordFile = join(dir, "record.json");
    writeFileSync(recordFile, await before.text());
    const signature = before.headers.get("passport-signature") ?? "";
    await dashboard("PATCH", `/v1/passports/${id}/state`, {
      lifecycle: "revoked",
      reason: "verifier integration test",
    });

    const now = await passport("verify", id, "--family", "api", "--consequence", "higher", "--json");
    expect(now.code).toBe(1);
    expect(JSON.parse(now.stdout)).toMatchObject({ outcome: "state_not_operative", state: { lifecycle: "revoked" } });

    const fed = ["verify", id, "--family", "api", "--consequence", "higher", "--record-file", recordFile];
    const stale = await passport(...fed, "--record-signature", signature, "--json");
    expect(stale.code).toBe(1);
    expect(JSON.parse(stale.stdout)).toMatchObject({
      outcome: "stale",
      next_step: "re-resolve",
      stale: [{ what: "status", problem: "record_superseded", current_version: 2 }],
    });
    // The same copy at lower consequence is what a cached path would act on.
    const lower = await passport(
      "verify",
      id,
      "--family",
      "api",
      "--record-file",
      recordFile,
      "--record-signature",
      signature,
    );
    expect(lower.code).toBe(0);

    // Through a provider's stapling middleware, in front of an API of its own.
    const api = new Hono();
    api.use("*", passportStatus({ resolver: service.resolver, identityId: id }));
    api.get("/v1/charges", (c) => c.json({ charges: [] }));
    const stapled = (await api.request("/v1/charges")).headers.get("passport-status") ?? "";
    const viaStaple = await passport(...fed, "--record-signature", signature, "--status-token", stapled);
    expect(viaStaple.code).toBe(1);
    expect(viaStaple.stdout).toMatch(/^FAIL\s+stale/);
    expect(viaStaple.stdout).toContain("NOT current (stapled token, version 2, revoked, published");
  });

  it("a wrong environment fails with environment_or_version_mismatch (exit 1)", async () => {
    const result = await passport("verify", payments(), "--family", "api", "--env", "staging");
    expect(result.stdout).toMatch(/^FAIL\s+environment_or_version_mismatch/);
    expect(result.code).toBe(1);
  });

  it("a wrong base URL fails with binding_mismatch (exit 1)", async () => {
    const result = await passport("verify", payments(), "--base-url", "https://payments.demo.example.evil.test/v1");
    expect(result.stdout).toMatch(/^FAIL\s+binding_mismatch/);
    expect(result.code).toBe(1);
  });

  it("an unknown id fails with not_found (exit 1)", async () => {
    const result = await passport("verify", mintIdentityId(), "--family", "api");
    expect(result.stdout).toMatch(/^FAIL\s+not_found/);
    expect(result.code).toBe(1);
  });

  it("a mistyped id fails with malformed_id (exit 1)", async () => {
    const id = payments();
    const typo = `${id.slice(0, 10)}${id.charAt(10) === "a" ? "b" : "a"}${id.slice(11)}`;
    const result = await passport("verify", typo, "--family", "api");
    expect(result.stdout).toMatch(/^FAIL\s+malformed_id/);
    expect(result.code).toBe(1);
  });

  it("an unreachable resolver is a network failure (exit 3), and a bad flag a usage error (exit 2)", async () => {
    const closed = await freePort();
    const down = await passport("verify", payments(), "--resolver", `http://127.0.0.1:${closed}`, "--retries", "0");
    expect(down.stdout).toMatch(/^FAIL\s+network_failure/);
    expect(down.code).toBe(3);
    const usage = await passport("verify", payments(), "--family", "robot");
    expect(usage.stderr).toContain("--family must be api or agent");
    expect(usage.code).toBe(2);
  });

  it("runs as the workspace's passport script (what `npm run passport -- ...` runs after the toolchain check)", async () => {
    // `npm run passport` first runs scripts/run.mjs, which may install the workspace; the test
    // skips that step (it must not change node_modules under the other suites) and runs the rest.
    const { stdout } = await run("pnpm", ["--silent", "run", "passport:cli", "resolve", payments(), "--jwks", keys()], {
      cwd: root,
      env: { ...process.env, PASSPORT_RESOLVER: service.resolver },
    });
    expect(stdout).toContain(`FOUND  ${payments()}`);
  });
  it("checks the demo passport against the service's transparency log, and audits the whole log (exit 0)", async () => {
    // The key is read from the resolver here only because this is the local service; a consumer pins it.
    const key = (await (await fetch(`${service.resolver}/log/key`)).text()).trim();
    const state = join(mkdtempSync(join(tmpdir(), "passport-log-")), "checkpoints.json");
    const logged = await passport("verify", payments(), "--log", key, "--log-state", state, "--json");
    expect(logged.code, logged.stdout + logged.stderr).toBe(0);
    const outcome = JSON.parse(logged.stdout);
    expect(outcome.proof.log.index).toBeGreaterThanOrEqual(0);
    expect(outcome.proof.log.checkpoint.size).toBeGreaterThan(outcome.proof.log.index);

    const audit = await passport("log", "--log", key, "--log-state", state, "--json");
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);

    // A checkpoint signed by another key than the pinned one is refused.
    const stranger = (await crypto.subtle.generateKey("Ed25519", true, ["sign", "verify"])) as CryptoKeyPair;
    const raw = new Uint8Array(await crypto.subtle.exportKey("raw", stranger.publicKey));
    const otherKey = await formatVerifierKey(key.split("+")[0] ?? "", raw);
    const refused = await passport("verify", payments(), "--log", otherKey, "--json");
    expect(refused.code).toBe(4);
    expect(JSON.parse(refused.stdout).outcome).toBe("checkpoint_invalid");
  });
});
