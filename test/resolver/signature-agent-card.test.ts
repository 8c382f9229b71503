import { env, exports } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import {
  identityCacheTag,
  mintIdentityId,
  PROBLEM_TYPE_BASE,
  SignatureAgentCard,
  signatureAgentCardJsonSchema,
} from "@passport/domain";
import { describe, expect, it } from "vitest";
import { aggregate, publish } from "./support/records.ts";

const at = "2026-10-20T09:00:00.000Z";
const FUTURE = "2099-01-01T00:00:00.000Z";
const PAST = "2020-01-01T00:00:00.000Z";
const PROVEN = "A".repeat(43);
const SECOND = "B".repeat(43);
const OPERATOR = { id: "org_operator", name: "Operator Ltd" };

function signingKeys(value: string, state: "verified" | "claimed", freshUntil: string, thumbprints: string[]) {
  return {
    class: "signing_keys",
    value,
    label: null,
    boundAt: at,
    verificationState: state,
    ...(state === "verified"
      ? {
          verificationMethod: "document_names_id" as const,
          verifiedAt: at,
          verificationFreshUntil: freshUntil,
          verificationEvidenceId: "ev_keys",
          observedKeys: thumbprints.map((thumbprint) => ({ thumbprint, kid: thumbprint, alg: "ed25519" })),
        }
      : {}),
  };
}

const agent = (bindings: ReturnType<typeof signingKeys>[], operator?: { id: string; name: string }) =>
  aggregate({
    passport: { family: "agent", displayName: "Research agent" },
    bindings,
    ...(operator ? { operator } : {}),
  });

function card(id: string) {
  return exports.default.fetch(`https://resolver.test/api/p/${id}/signature-agent-card.json`);
}

describe("GET /api/p/{id}/signature-agent-card.json", () => {
  it("describes the agent and lists only its proven keys, each with the directory that proves it", async () => {
    const record = await publish(
      agent(
        [
          signingKeys("https://agent.example/.well-known/http-message-signatures-directory", "verified", FUTURE, [
            PROVEN,
          ]),
          signingKeys("https://old.example/keys.json", "verified", PAST, [SECOND]),
          signingKeys("https://claimed.example/keys.json", "claimed", FUTURE, []),
        ],
        OPERATOR,
      ),
    );
    const response = await card(record.identity_id);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    const base = env.PUBLIC_BASE_URL;
    const served = await response.json();
    expect(SignatureAgentCard.safeParse(served).success).toBe(true);
    expect(served).toEqual({
      client_name: "Research agent",
      client_uri: `${base}/p/${record.identity_id}`,
      passport: {
        identity_id: record.identity_id,
        record_url: `${base}/api/p/${record.identity_id}.json`,
        record_digest: record.digest,
        organisation: { id: record.organisation.id, name: record.organisation.name },
        operator: OPERATOR,
        keys: [
          {
            thumbprint: PROVEN,
            kid: PROVEN,
            alg: "ed25519",
            directory: "https://agent.example/.well-known/http-message-signatures-directory",
            fresh_until: FUTURE,
          },
        ],
      },
    });
  });

  it("is cached like the record and carries the identity's Cache-Tag, so the publication's purge drops it", async () => {
    const record = await publish(agent([signingKeys("https://agent.example/keys.json", "verified", FUTURE, [PROVEN])]));
    const [served, json] = await Promise.all([
      card(record.identity_id),
      exports.default.fetch(`https://resolver.test/api/p/${record.identity_id}.json`),
    ]);
    for (const header of ["cache-tag", "cache-control", "cloudflare-cdn-cache-control"]) {
      expect(served.headers.get(header), header).toBe(json.headers.get(header));
    }
    expect(served.headers.get("cache-tag")).toBe(identityCacheTag(record.identity_id));
  });

  it("answers 404 no-signature-agent-card for an agent without proven keys and for an API passport", async () => {
    const lapsed = await publish(agent([signingKeys("https://agent.example/keys.json", "verified", PAST, [PROVEN])]));
    const claimed = await publish(agent([signingKeys("https://agent.example/keys.json", "claimed", FUTURE, [])]));
    const api = await publish(aggregate());
    for (const record of [lapsed, claimed, api]) {
      const response = await card(record.identity_id);
      expect(response.status, record.identity_id).toBe(404);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(response.headers.get("cache-tag")).toBe(identityCacheTag(record.identity_id));
      expect(((await response.json()) as { type: string }).type).toBe(`${PROBLEM_TYPE_BASE}no-signature-agent-card`);
    }
  });

  it("answers like the record for an unknown or malformed id", async () => {
    const unknown = await card(mintIdentityId());
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { type: string }).type).toBe(`${PROBLEM_TYPE_BASE}identity-not-found`);
    const malformed = await card("psp_not-an-id");
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { type: string }).type).toBe(`${PROBLEM_TYPE_BASE}malformed-identity-id`);
  });
});

describe("the JSON Schema served at /schemas/signature-agent-card.json", () => {
  it("is the one generated from the zod SignatureAgentCard, and a served card is valid against it", async () => {
    const response = await exports.default.fetch("https://resolver.test/schemas/signature-agent-card.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/schema+json");
    const schema = await response.json();
    expect(schema).toEqual(signatureAgentCardJsonSchema());

    const record = await publish(agent([signingKeys("https://agent.example/keys.json", "verified", FUTURE, [PROVEN])]));
    const validator = new Validator(schema as never, "2020-12", false);
    expect(validator.validate(await (await card(record.identity_id)).json()).errors).toEqual([]);
    // The schema refuses what the card must never carry: key material beside a thumbprint.
    const withKeyBytes = {
      client_name: "x",
      client_uri: "https://resolver.test/p/x",
      passport: {
        identity_id: record.identity_id,
        record_url: "https://resolver.test/api/p/x.json",
        record_digest: record.digest,
        organisation: { id: "org_x", name: "X" },
        keys: [
          { thumbprint: PROVEN, x: "key-bytes", directory: "https://agent.example/keys.json", fresh_until: FUTURE },
        ],
      },
    };
    expect(validator.validate(withKeyBytes).valid).toBe(false);
  });
});
