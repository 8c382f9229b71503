import { env, exports } from "cloudflare:workers";
import { Validator } from "@cfworker/json-schema";
import {
  identityCacheTag,
  mintIdentityId,
  PassportRecord,
  PROBLEM_TYPE_BASE,
  SignatureAgentCard,
  signatureAgentCard,
  signatureAgentCardJsonSchema,
  WebBotAuthSignatureAgentCard,
  webBotAuthSignatureAgentCardJsonSchema,
} from "@passport/domain";
import { describe, expect, it } from "vitest";
import { aggregate, publish } from "./support/records.ts";

const at = "2026-10-20T09:00:00.000Z";
const FUTURE = "2099-01-01T00:00:00.000Z";
const PAST = "2020-01-01T00:00:00.000Z";
const PROVEN = "A".repeat(43);
const SECOND = "B".repeat(43);
const OPERATOR = { id: "org_operator", name: "Operator Ltd" };

/** A stored key as the control plane keeps it: with its public members when `x` is given. */
type StoredKey = string | { thumbprint: string; x: string } | { thumbprint: string; withdrawnAt: string };

function signingKeys(value: string, state: "verified" | "claimed", freshUntil: string, thumbprints: StoredKey[]) {
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
          observedKeys: thumbprints.map((stored) =>
            typeof stored === "string"
              ? { thumbprint: stored, kid: stored, alg: "ed25519" }
              : "x" in stored
                ? { thumbprint: stored.thumbprint, jwk: { kty: "OKP" as const, crv: "Ed25519", x: stored.x } }
                : stored,
          ),
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

describe("the card's keys and its draft form", () => {
  const X = "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs";

  it("carries each proven key itself in jwks, named by its thumbprint, once however many directories prove it", async () => {
    const record = await publish(
      agent([
        signingKeys("https://one.example/keys.json", "verified", FUTURE, [
          { thumbprint: PROVEN, x: X },
          { thumbprint: SECOND, withdrawnAt: at },
        ]),
        signingKeys("https://two.example/keys.json", "verified", FUTURE, [{ thumbprint: PROVEN, x: X }]),
      ]),
    );
    // The record says which key was withdrawn; the card lists only what is proven now.
    expect(record.bindings[0]).toMatchObject({
      keys: [{ thumbprint: PROVEN, jwk: { kty: "OKP", crv: "Ed25519", x: X } }],
      withdrawn_keys: [{ thumbprint: SECOND, withdrawn_at: at }],
    });
    const served = (await (await card(record.identity_id)).json()) as SignatureAgentCard;
    expect(served.jwks).toEqual({ keys: [{ kty: "OKP", crv: "Ed25519", x: X, kid: PROVEN, use: "sig" }] });
    expect(served.passport.keys.map((k) => [k.thumbprint, k.directory])).toEqual([
      [PROVEN, "https://one.example/keys.json"],
      [PROVEN, "https://two.example/keys.json"],
    ]);
    expect(served.client_id).toBeUndefined();
    expect(WebBotAuthSignatureAgentCard.safeParse(served).success).toBe(true);

    // From a resolver on https, the card names itself: the draft's client_id, the URL it is served at.
    const onHttps = signatureAgentCard(PassportRecord.parse(record), "https://resolver.example", Date.now());
    expect(onHttps?.client_id).toBe(`https://resolver.example/api/p/${record.identity_id}/signature-agent-card.json`);
    expect(WebBotAuthSignatureAgentCard.safeParse(onHttps).success).toBe(true);
  });

  it("serves the draft's schema beside ours; it holds the served card and refuses what the draft forbids", async () => {
    const response = await exports.default.fetch(
      "https://resolver.test/schemas/web-bot-auth-signature-agent-card.json",
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/schema+json");
    const schema = await response.json();
    expect(schema).toEqual(webBotAuthSignatureAgentCardJsonSchema());
    const validator = new Validator(schema as never, "2020-12", false);

    const record = await publish(
      agent([signingKeys("https://agent.example/keys.json", "verified", FUTURE, [{ thumbprint: PROVEN, x: X }])]),
    );
    const served = await (await card(record.identity_id)).json();
    expect(validator.validate(served).errors).toEqual([]);

    const draftExample = {
      client_id: "https://example.com/bot",
      client_name: "Example Bot",
      jwks_uri: "https://example.com/.well-known/http-message-signatures-directory",
      web_bot_auth: { trigger: "fetcher", purpose: "search", "rfc9309-compliance": true, "known-urls": ["/"] },
      unknown_member: "ignored",
    };
    expect(validator.validate(draftExample).valid).toBe(true);
    for (const [why, invalid] of [
      ["no parameter at all", {}],
      ["jwks beside jwks_uri", { ...draftExample, jwks: { keys: [] } }],
      ["a jwks_uri not on https", { ...draftExample, jwks_uri: "http://example.com/keys" }],
      ["an unknown trigger", { ...draftExample, web_bot_auth: { trigger: "sometimes" } }],
      ["rfc9309-compliance as a list (an older draft's form)", { web_bot_auth: { "rfc9309-compliance": ["Allow"] } }],
    ] as const) {
      expect(validator.validate(invalid).valid, why).toBe(false);
      expect(WebBotAuthSignatureAgentCard.safeParse(invalid).success, why).toBe(false);
    }
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
    // The schema refuses key material in passport.keys: the keys themselves are in jwks, by thumbprint.
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
