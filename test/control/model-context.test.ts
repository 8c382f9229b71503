import { env } from "cloudflare:workers";
import { PassportRecord } from "@passport/domain";
import { describe, expect, it } from "vitest";
import { type Body, Caller, resolve } from "../support/api.ts";
import { dashboard, verifiedManifest } from "../support/control-fixtures.ts";

// Spec 1.1 and 1.6: the model an agent runs is context around its persistent identity. Changing it
// keeps the identity id and publishes a new record version; the envelope shows it as context only.

async function envelopeOf(manifest: string): Promise<Body> {
  const response = await env.TEST_RESOLVER.fetch(
    `http://resolver.test/api/agent-envelope?target=${encodeURIComponent(manifest)}`,
  );
  expect(response.status).toBe(200);
  return response.json<Body>();
}

describe("spec 1.1: an agent passport says which model it runs", () => {
  it("publishes the model, and a model change keeps the identity id and mints a new record version", async () => {
    const admin = await Caller.create("admin");
    const { id, manifest } = await verifiedManifest(admin, { display_name: "Model-changing agent" });
    const before = await resolve(id);
    expect(before.record.state.model).toBeUndefined();
    const envelopeBefore = await envelopeOf(manifest);

    const first = { provider: "example-ai", name: "example-model-large", version: "2026-09" };
    const stated = await admin.json("PATCH", `/v1/passports/${id}/state`, { model: first });
    expect(stated.identity_id).toBe(id);
    expect(stated.state.model).toEqual(first);
    const v1 = PassportRecord.parse((await resolve(id)).record);
    expect(v1.identity_id).toBe(id);
    expect(v1.state.model).toEqual(first);
    expect(v1.record_version).toBe(before.record.record_version + 1);

    const second = { provider: "other-ai", name: "other-model" };
    await admin.json("PATCH", `/v1/passports/${id}/state`, { model: second });
    const v2 = PassportRecord.parse((await resolve(id)).record);
    expect(v2.identity_id).toBe(id);
    expect(v2.state.model).toEqual(second);
    expect(v2.record_version).toBe(v1.record_version + 1);
    // A model change is context, not a material change: no re-evaluation starts.
    expect(v2.state.recheck_required).toBeUndefined();
    const history = (await admin.json("GET", `/v1/passports/${id}/history`)).items as Body[];
    expect(history.at(-1)).toMatchObject({ kind: "state.changed", detail: { model: second } });

    // The envelope reports the model as context; its posture and result are what they were.
    const envelope = await envelopeOf(manifest);
    expect(envelope.subject.model).toEqual(second);
    expect(envelope.identity_id).toBe(id);
    expect({ posture: envelope.posture, result: envelope.result }).toEqual({
      posture: envelopeBefore.posture,
      result: envelopeBefore.result,
    });

    // The Dashboard's passport page shows it.
    const page = await (await dashboard(admin, `/dashboard/passports/${id}`)).text();
    expect(page).toContain("other-ai · other-model");

    // Cleared with null: the record no longer states a model.
    await admin.json("PATCH", `/v1/passports/${id}/state`, { model: null });
    const v3 = PassportRecord.parse((await resolve(id)).record);
    expect(v3.state.model).toBeUndefined();
    expect(v3.identity_id).toBe(id);
  });

  it("refuses a model on an API passport, and a credential typed into it", async () => {
    const owner = await Caller.create("owner");
    const api = await owner.createPassport({ display_name: "Not an agent" });
    const refused = await owner.request("PATCH", `/v1/passports/${api.identity_id}/state`, {
      model: { provider: "example-ai", name: "example-model" },
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ errors: [{ path: "model" }] });

    const agent = await verifiedManifest(owner, { display_name: "Agent with a secret" });
    const secret = await owner.request("PATCH", `/v1/passports/${agent.id}/state`, {
      model: { provider: "example-ai", name: "AKIAIOSFODNN7EXAMPLE" },
    });
    expect(secret.status).toBe(400);
  });
});
