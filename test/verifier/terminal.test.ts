// The CLI never prints a tenant's control characters raw: a record served with ESC, CR or a
// right-to-left override in its names, values or evidence cannot paint an "OK" over a FAIL report
// (issue #25). The CLI's copy of the unsafe set agrees with the service's.
import * as domain from "@passport/domain";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EXIT } from "../../packages/verifier/src/cli/args.ts";
import { run } from "../../packages/verifier/src/cli/main.ts";
import { escapeText, readsAs, TERMINAL_UNSAFE } from "../../packages/verifier/src/cli/terminal.ts";
import { asserted, CONTRACT_RESOLVER, contractRecord, NOW, RecordServer } from "./support.ts";

const FORGED = "\r\u001b[2K\u001b[32mOK  ok  all checks passed\u001b[0m";
const RAW_CHARACTERS = ["\u001b", "\r", "\u0085", "\u009b", "\u202e", "\u2066"];
const hasRaw = (text: string) => RAW_CHARACTERS.some((c) => text.includes(c));

async function cli(server: RecordServer, args: string[]) {
  const out: string[] = [];
  const code = await run([...args, "--resolver", CONTRACT_RESOLVER, "--jwks", "keys.json"], {
    stdout: (text) => out.push(text),
    stderr: () => {},
    env: {},
    fetch: server.fetch,
    now: () => NOW,
    readFile: async () => JSON.stringify(server.jwks),
  });
  return { code, stdout: out.join("\n") };
}

async function hostileRecord() {
  const server = await RecordServer.create();
  const record = contractRecord({
    display_name: `Payments${FORGED}`,
    organisation: { id: "org_contract", name: "Contract\u202Etd.L", relationship: "responsible" },
    evidence: [
      asserted("evd_x", "organisation.identity", { source: `registry${FORGED}`, scope: "org\u0085\u009b31m" }),
    ],
  });
  record.bindings.push({ class: "service", value: `billing\u2066${FORGED}`, bound_at: new Date(NOW).toISOString() });
  await server.publish(record);
  return { server, id: record.identity_id };
}

describe("the CLI and tenants' control characters", () => {
  it("verify: a FAIL report names the hostile source escaped, on its own line, never a forged OK", async () => {
    const { server, id } = await hostileRecord();
    const result = await cli(server, ["verify", id, "--require-evidence", "organisation.identity"]);
    expect(result.code).toBe(EXIT.failed);
    expect(hasRaw(result.stdout)).toBe(false);
    expect(result.stdout.split("\n")[0]).toMatch(/^FAIL\s+missing_evidence/);
    expect(result.stdout).toContain("source registry\\u{0D}\\u{1B}[2K\\u{1B}[32mOK  ok  all checks passed");
  });

  it("resolve: names, values and the organisation are printed escaped", async () => {
    const { server, id } = await hostileRecord();
    const result = await cli(server, ["resolve", id]);
    expect(result.code).toBe(EXIT.ok);
    expect(hasRaw(result.stdout)).toBe(false);
    expect(result.stdout).toContain("Contract\\u{202E}td.L");
    expect(result.stdout).toContain("service billing\\u{2066}\\u{0D}");
  });

  it("--json: valid JSON of the same values, with no raw control character", async () => {
    const { server, id } = await hostileRecord();
    const result = await cli(server, ["resolve", id, "--json"]);
    expect(hasRaw(result.stdout)).toBe(false);
    const parsed = JSON.parse(result.stdout);
    expect(parsed.record.display_name).toBe(`Payments${FORGED}`);
    expect(parsed.record.evidence[0].scope).toBe("org\u0085\u009b31m");
  });

  it("resolve: an internationalised host is shown in ASCII, as checked, beside its Unicode form", async () => {
    const server = await RecordServer.create();
    const record = contractRecord();
    record.bindings.push({
      class: "documentation",
      value: "https://xn--bcher-kva.example/docs",
      bound_at: new Date(NOW).toISOString(),
    });
    await server.publish(record);
    const result = await cli(server, ["resolve", record.identity_id]);
    expect(result.stdout).toContain("documentation https://xn--bcher-kva.example/docs (host reads as bücher.example)");
    expect(result.stdout).toContain("endpoint https://api.contract.example/v1  [");
  });

  it("escapes exactly what the service refuses on write", () => {
    expect(TERMINAL_UNSAFE.source).toBe(domain.DISPLAY_UNSAFE.source);
    expect(escapeText("a\u{E0041}b")).toBe("a\\u{E0041}b");
    expect(escapeText("Zahlungen 👩‍💻 مدفوعات")).toBe("Zahlungen 👩‍💻 مدفوعات");
  });

  it("reads internationalised hosts exactly as the service does", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9äöüéçñßа-яα-ω一-龥ぁ-ゖ-]{1,30}$/u), (label) => {
        if (!URL.canParse(`https://${label}.example/`)) return;
        const host = new URL(`https://${label}.example/`).hostname;
        const unicode = domain.unicodeHost(host);
        expect(readsAs(`https://${host}/`)).toBe(unicode === host ? "" : ` (host reads as ${escapeText(unicode)})`);
      }),
      { numRuns: 300 },
    );
  });
});
