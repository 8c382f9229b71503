import * as domain from "@passport/domain";
import { ENVELOPE_ASSURANCES, ENVELOPE_TYPE, ENVELOPE_VERSION } from "@passport/protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  cacheDirectives,
  coveredBy,
  durationSeconds,
  envelopeProblem,
  identityIdDefect,
  parseRecord,
  RecordCache,
  redactUrl,
  sameBindingValue,
} from "../../packages/verifier/src/index.ts";
import { typedWebUrl } from "../domain/web-urls.ts";
import { resolve as resolveRaw } from "../support/api.ts";
import { Owner, recording, verifierFor } from "./support.ts";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/**
 * docs/identity-id.md's rules, derived here a second way: the check character is validated the
 * textbook Luhn mod N way (from the right, the check character weighted 1, then 2, 1, ...; the
 * base-32 digits of each product summed; a valid id sums to a multiple of 32), not generated.
 */
function referenceDefect(id: string): string | undefined {
  const lower = id.toLowerCase();
  if (!lower.startsWith("psp_")) return "prefix";
  if (id.length !== 30) return "length";
  const body = lower.slice(4);
  if ([...body].some((c) => !ALPHABET.includes(c))) return "alphabet";
  if (id !== lower) return "case";
  let sum = 0;
  for (let i = body.length - 1, weight = 1; i >= 0; i--, weight = 3 - weight) {
    const product = ALPHABET.indexOf(body.charAt(i)) * weight;
    sum += Math.floor(product / 32) + (product % 32);
  }
  return sum % 32 === 0 ? undefined : "check_character";
}

describe("identity id check", () => {
  it("classifies every candidate exactly as the service's own check does, and as the documented rules say", () => {
    const candidate = fc.oneof(
      fc.string(),
      fc.stringMatching(/^psp_[0-9a-zA-Z]{24,28}$/),
      fc
        .tuple(fc.constantFrom(...Array.from({ length: 200 }, () => domain.mintIdentityId())), fc.nat(29), fc.nat(31))
        .map(([id, at, by]) => `${id.slice(0, at)}${ALPHABET.charAt(by)}${id.slice(at + 1)}`),
    );
    fc.assert(
      fc.property(candidate, (id) => {
        expect(identityIdDefect(id)).toBe(domain.identityIdDefect(id));
        expect(identityIdDefect(id)).toBe(referenceDefect(id));
      }),
      { numRuns: 5000 },
    );
  });
});

describe("base URL matching", () => {
  it("accepts the bound base URL and addresses below it, and nothing that merely looks alike", () => {
    const bound = "https://api.example.com/v1";
    expect(coveredBy("https://api.example.com/v1", bound)).toBe(true);
    expect(coveredBy("https://API.example.com:443/v1/", bound)).toBe(true);
    expect(coveredBy("https://api.example.com/v1/charges?x=1", bound)).toBe(true);
    expect(coveredBy("https://api.example.com/v10", bound)).toBe(false);
    expect(coveredBy("https://api.example.com/", bound)).toBe(false);
    expect(coveredBy("http://api.example.com/v1", bound)).toBe(false);
    expect(coveredBy("https://api.example.com.evil.example/v1", bound)).toBe(false);
    expect(coveredBy("https://api.example.com:8443/v1", bound)).toBe(false);
  });

  it("compares binding values as URLs when both are URLs, exactly otherwise", () => {
    expect(sameBindingValue("https://a.example/openapi.json", "HTTPS://A.EXAMPLE/openapi.json")).toBe(true);
    expect(sameBindingValue("arn:aws:apigateway:eu-west-1::/apis/abc", "arn:aws:apigateway:eu-west-1::/apis/ABC")).toBe(
      false,
    );
  });

  it("matches the service's canonical form: a trailing dot, an internationalised host or a fragment changes nothing", () => {
    const bound = "https://xn--bcher-kva.example/v1";
    expect(coveredBy("https://bücher.example/v1/books", bound)).toBe(true);
    expect(coveredBy("https://BÜCHER.example./v1#top", bound)).toBe(true);
    expect(coveredBy("https://api.example.com./v1", "https://api.example.com/v1")).toBe(true);
    expect(sameBindingValue("https://api.example.com./v1#x", "https://api.example.com/v1")).toBe(true);
    expect(coveredBy("https://api.example.com../v1", "https://api.example.com/v1")).toBe(false);
  });

  it("agrees with the service's canonical form of any web URL", () => {
    fc.assert(
      fc.property(typedWebUrl, ({ typed }) => {
        const canonical = domain.canonicalUrl(typed);
        expect(canonical, typed).toBeDefined();
        if (canonical === undefined) return;
        expect(domain.canonicalUrl(canonical)).toBe(canonical);
        expect(sameBindingValue(typed, canonical)).toBe(true);
        expect(coveredBy(typed, canonical)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("drops credentials, query and fragment before repeating an address", () => {
    expect(redactUrl("https://user:secret@api.example.com/v1?api_key=abc#x")).toBe("https://api.example.com/v1");
  });
});

describe("durations and cache directives", () => {
  it("reads seconds and unit suffixes, and refuses anything else", () => {
    expect([30, "45", "90s", "15m", "12h", "30d", "1.5h"].map((d) => durationSeconds(d))).toEqual([
      30, 45, 90, 900, 43_200, 2_592_000, 5400,
    ]);
    expect(["", "5w", "-1", "ten", "1e3"].map((d) => durationSeconds(d))).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("reads the Cache-Control directives a private cache honours", () => {
    expect(cacheDirectives("public, max-age=15")).toEqual({ maxAge: 15, noStore: false, noCache: false });
    expect(cacheDirectives("no-store")).toMatchObject({ noStore: true });
    expect(cacheDirectives('no-cache, max-age="30"')).toEqual({ maxAge: 30, noStore: false, noCache: true });
    expect(cacheDirectives(null)).toEqual({ noStore: false, noCache: false });
  });

  it("bounds the cache, evicting the least recently used entry", () => {
    const cache = new RecordCache(2);
    const entry = { record: {} as never, confirmedAt: 0, ageAtConfirmation: 0, noCache: false, stale: 0, expired: 0 };
    cache.set("a", entry);
    cache.set("b", entry);
    cache.get("a");
    cache.set("c", entry);
    expect([cache.get("a"), cache.get("b"), cache.get("c")].map(Boolean)).toEqual([true, false, true]);
    expect(cache.size).toBe(2);
  });
});

describe("expectations", () => {
  it("refuses a malformed expectation before asking the resolver", async () => {
    const { fetch, calls } = recording();
    const verifier = verifierFor({ fetch });
    const id = domain.mintIdentityId();
    await expect(verifier.verify(id, { evidence: [{ claim: "x", maxAge: "soon" }] })).rejects.toThrow(TypeError);
    await expect(verifier.verify(id, { maxAge: "-5" })).rejects.toThrow(TypeError);
    await expect(verifier.verify(id, { consequence: "urgent" as never })).rejects.toThrow(TypeError);
    expect(() => verifierFor({ resolver: "resolver.example" })).toThrow(TypeError);
    expect(calls).toHaveLength(0);
  });
});

describe("reading a record", () => {
  it("reads the resolver's real record and keeps only the members it knows", async () => {
    const owner = await Owner.create();
    const { id, endpoint } = await owner.apiPassport();
    const { record } = await resolveRaw(id);
    const parsed = parseRecord({ ...record, future_member: { anything: true } });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value).toMatchObject({
      identity_id: id,
      family: "api",
      bindings: [{ class: "endpoint", value: endpoint }],
      state: { lifecycle: "active" },
    });
    expect(parsed.value).not.toHaveProperty("future_member");
    expect(parsed.value).not.toHaveProperty("state.availability");
  });

  it("reads a signing_keys binding's keys and an agent's uses links, refusing them in the wrong shape", () => {
    const thumbprint = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs";
    const record = {
      identity_id: domain.mintIdentityId(),
      family: "agent",
      state: { lifecycle: "active" },
      evidence: [],
      bindings: [
        {
          class: "signing_keys",
          value: "https://bot.example.com/.well-known/http-message-signatures-directory",
          verification: { state: "verified", method: "document_names_id" },
          keys: [{ thumbprint, kid: "k1" }],
        },
      ],
      uses: [{ identity_id: "psp_x", family: "api", declared_at: "2026-10-01T00:00:00Z" }],
    };
    const parsed = parseRecord(record);
    expect(parsed.ok && parsed.value.bindings[0]?.keys).toEqual([{ thumbprint, kid: "k1" }]);
    expect(parsed.ok && parsed.value.uses).toEqual(record.uses);
    const badKeys = parseRecord({ ...record, bindings: [{ ...record.bindings[0], keys: [{ kid: "k1" }] }] });
    expect(!badKeys.ok && badKeys.problem).toMatch(/bindings\[0\]\.keys\[0\]\.thumbprint/);
    const badUses = parseRecord({ ...record, uses: [{ family: "api" }] });
    expect(!badUses.ok && badUses.problem).toMatch(/uses\[0\]\.identity_id/);
  });

  it("refuses an answer whose members have the wrong types, or that is not a passport record", async () => {
    const owner = await Owner.create();
    const { id } = await owner.apiPassport();
    const { record } = await resolveRaw(id);
    const broken: [unknown, RegExp][] = [
      [{ ...record, state: { ...record.state, lifecycle: 1 } }, /state\.lifecycle/],
      [{ ...record, bindings: "https://api.example.com" }, /bindings is not an array/],
      [{ ...record, evidence: [{ observed_at: "2026-01-01T00:00:00Z" }] }, /evidence\[0\]\.claim/],
      [{ ...record, record_format: "something.else" }, /record_format/],
      [{ ...record, state: undefined }, /state is not an object/],
      [[record], /not a JSON object/],
    ];
    for (const [value, problem] of broken) {
      const parsed = parseRecord(value);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.problem).toMatch(problem);
    }
  });
});

describe("agent action envelope shape", () => {
  const valid = {
    type: ENVELOPE_TYPE,
    version: ENVELOPE_VERSION,
    subject: { target: "https://agents.example/card.json", target_type: "agent_manifest" },
    posture: "current",
    result: "verified",
    missing_evidence: [],
    recommended_path: "view_resolver_proof",
    actions: [{ label: "View proof", kind: "route", url: null }],
    authority_boundary: "Grants nothing.",
    ...ENVELOPE_ASSURANCES,
    extra_member: "allowed",
  };

  it("accepts the spec 2.4 shape with extra members, and agrees with the domain schema on what it refuses", () => {
    expect(envelopeProblem(valid)).toBeUndefined();
    expect(domain.AgentActionEnvelope.safeParse(valid).success).toBe(true);
    const broken = [
      { ...valid, verifier_marks_bound: true },
      { ...valid, local_policy_decides: false },
      { ...valid, recommended_path: "approve" },
      { ...valid, actions: [{ label: "x", kind: "call" }] },
      { ...valid, subject: { target: "x", target_type: "api" } },
      { ...valid, missing_evidence: "none" },
    ];
    for (const value of broken) {
      expect(envelopeProblem(value)).toBeDefined();
      expect(domain.AgentActionEnvelope.safeParse(value).success).toBe(false);
    }
  });
});
