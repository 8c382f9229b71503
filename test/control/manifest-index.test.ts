import { env } from "cloudflare:workers";
import { manifestIndexPrefix } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { type Body, Caller, resolve } from "../support/api.ts";
import { json, serve, uniqueHost } from "../support/hosts.ts";

async function claimants(manifestUrl: string): Promise<string[]> {
  const { keys } = await env.SNAPSHOTS.list({ prefix: await manifestIndexPrefix(manifestUrl) });
  return keys.map((key) => key.name.split(":").at(-1) ?? "");
}

/** Serves the manifest naming `id` and has the service verify that binding. */
async function prove(caller: Caller, id: string, manifest: string): Promise<Body> {
  const url = new URL(manifest);
  await serve(url.hostname, { [url.pathname]: json({ passport: id }) });
  const passport = await caller.json("GET", `/v1/passports/${id}`);
  const binding = passport.bindings.find((b: Body) => b.value === manifest);
  return caller.json("POST", `/v1/passports/${id}/bindings/${binding.id}/verify`);
}

describe("manifest index", () => {
  it("holds only verified manifest bindings, follows them, and leaves retired passports out", async () => {
    const admin = await Caller.create("admin");
    const first = `https://${uniqueHost("agents")}/agent-card.json`;
    const second = `https://${uniqueHost("agents")}/agent-card.json`;
    const agent = await admin.createPassport({ family: "agent", bindings: [{ class: "manifest", value: first }] });
    const id = agent.identity_id;
    expect(await claimants(first)).toEqual([]);
    const firstProof = await prove(admin, id, first);
    expect(firstProof.result).toBe("verified");
    expect(await claimants(first)).toEqual([id]);

    const moved = await admin.json("POST", `/v1/passports/${id}/bindings`, { class: "manifest", value: second });
    expect(await claimants(second)).toEqual([]);
    await prove(admin, id, second);
    await admin.json(
      "DELETE",
      `/v1/passports/${id}/bindings/${moved.bindings.find((b: { value: string }) => b.value === first).id}`,
    );
    expect(await claimants(first)).toEqual([]);
    expect(await claimants(second)).toEqual([id]);
    // The removed binding's proof leaves the record with it.
    const proofOfFirst = firstProof.passport.bindings[0].verification.evidence;
    const { record } = await resolve(id);
    expect(record.evidence.map((e: Body) => e.id)).not.toContain(proofOfFirst);
    expect(record.evidence).toHaveLength(1);

    await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "retired" });
    expect(await claimants(second)).toEqual([]);
  });
});
