import { env } from "cloudflare:workers";
import { manifestIndexPrefix } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { Caller } from "../support/api.ts";

async function claimants(manifestUrl: string): Promise<string[]> {
  const { keys } = await env.SNAPSHOTS.list({ prefix: await manifestIndexPrefix(manifestUrl) });
  return keys.map((key) => key.name.split(":").at(-1) ?? "");
}

describe("manifest index", () => {
  it("follows an agent passport's manifest bindings and leaves retired passports out", async () => {
    const admin = await Caller.create("admin");
    const first = `https://agents.example.com/${crypto.randomUUID()}/agent-card.json`;
    const second = `https://agents.example.com/${crypto.randomUUID()}/agent-card.json`;
    const agent = await admin.createPassport({ family: "agent", bindings: [{ class: "manifest", value: first }] });
    const id = agent.identity_id;
    expect(await claimants(first)).toEqual([id]);

    const moved = await admin.json("POST", `/v1/passports/${id}/bindings`, { class: "manifest", value: second });
    await admin.json(
      "DELETE",
      `/v1/passports/${id}/bindings/${moved.bindings.find((b: { value: string }) => b.value === first).id}`,
    );
    expect(await claimants(first)).toEqual([]);
    expect(await claimants(second)).toEqual([id]);

    await admin.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "retired" });
    expect(await claimants(second)).toEqual([]);
  });
});
