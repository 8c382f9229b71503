// Issue 8's "Done when": records published by the real control plane and served by the real
// resolver, tampered with in KV (a mis-publish or a compromised store) or on the way (a malicious
// cache or proxy, as a wrapping fetch), each caught by the verifier as its own outcome.
import { env } from "cloudflare:workers";
import {
  canonicalBytes,
  canonicalDigest,
  historyKey,
  PassportRecord,
  type SnapshotMetadata,
  snapshotKey,
} from "@passport/domain";
import { CompactSign, importJWK } from "jose";
import { describe, expect, it } from "vitest";
import { EXIT } from "../../packages/verifier/src/cli/args.ts";
import { run } from "../../packages/verifier/src/cli/main.ts";
import {
  type FetchLike,
  type JwkSet,
  PROPAGATION_WINDOW_SECONDS,
  RecordCache,
  Verifier,
} from "../../packages/verifier/src/index.ts";
import { signingKeyPair } from "../../scripts/dev-keys.mjs";
import { publishPassport } from "../../workers/control/src/publication/publish.ts";
import { withSequencerEnv } from "../support/publication-sequencer.ts";
import { Owner, RESOLVER, resolverFetch, verifierFor } from "./support.ts";

/** The key set a consumer pinned: the control plane's current public key, obtained out of band. */
const pinned = (): JwkSet => JSON.parse(env.TEST_SIGNING_JWKS);
const currentKid = () => JSON.parse(env.SIGNING_KEY).kid as string;

async function snapshot(id: string) {
  const { value, metadata } = await env.SNAPSHOTS.getWithMetadata<SnapshotMetadata>(snapshotKey(id), "text");
  return { text: value ?? "", metadata: metadata as SnapshotMetadata };
}

/** Overwrites what the resolver serves for `id`, as a mis-publish or a compromised store would. */
function tamper(id: string, text: string, metadata: SnapshotMetadata): Promise<void> {
  return env.SNAPSHOTS.put(snapshotKey(id), text, { metadata });
}

/**
 * A clock past the propagation window: the versions the tests publish are seconds old, and until
 * then an older copy is what a lagging cache may still serve (`stale`, docs/freshness.md). A replay
 * is one that persists past the window.
 */
const afterPropagation = () => Date.now() + (PROPAGATION_WINDOW_SECONDS + 5) * 1000;

/** A passport with `versions` published versions, and the snapshot of each as it was published. */
async function publishedVersions(versions: number) {
  const owner = await Owner.create();
  const { id } = await owner.apiPassport();
  const snapshots = [await snapshot(id)];
  for (let v = 2; v <= versions; v++) {
    await owner.caller.json("PATCH", `/v1/passports/${id}`, { display_name: `Version ${v}` });
    snapshots.push(await snapshot(id));
  }
  return { owner, id, snapshots };
}

/** A detached ES256 JWS over the record's canonical JSON, made with a key of the test's own. */
async function signWith(privateJwk: string, record: unknown): Promise<string> {
  const jwk = JSON.parse(privateJwk);
  const jws = await new CompactSign(canonicalBytes(record))
    .setProtectedHeader({ alg: "ES256", kid: jwk.kid, typ: "passport+jws" })
    .sign(await importJWK(jwk, "ES256"));
  const [header, , signature] = jws.split(".");
  return `${header}..${signature}`;
}

describe("signed records: each kind of tampering has its own outcome", () => {
  it("an untouched record verifies: digest, signature with the pinned key, and the whole signed history", async () => {
    const { id } = await publishedVersions(3);
    const result = await verifierFor({ jwks: pinned() }).verify(id, { family: "api", history: true });
    expect(result.outcome).toBe("ok");
    expect(result.proof).toEqual({ digest: "verified", signature: "verified", kid: currentKid(), history: "verified" });
  });

  it("the keys may come from a URL the caller chooses, here the resolver's own key set", async () => {
    const { id } = await publishedVersions(1);
    const verifier = verifierFor({ jwks: `${RESOLVER}/.well-known/jwks.json` });
    const result = await verifier.verify(id, { history: true });
    expect(result.outcome).toBe("ok");
    expect(result.proof).toMatchObject({ signature: "verified", kid: currentKid(), history: "verified" });
  });

  it("a record altered by one byte in KV: signature_invalid (digest_mismatch), relying on nothing it says", async () => {
    const { id, snapshots } = await publishedVersions(1);
    const { text, metadata } = snapshots[0] as Awaited<ReturnType<typeof snapshot>>;
    const altered = text.replace('"Verifier test API"', '"Verifier test APJ"');
    expect(altered.length).toBe(text.length);
    expect(altered).not.toBe(text);
    await tamper(id, altered, metadata);

    const result = await verifierFor({ jwks: pinned() }).verify(id, { family: "api" });
    expect(result).toMatchObject({
      outcome: "signature_invalid",
      kind: "digest_mismatch",
      next_step: "deny",
      stated_digest: metadata.digest,
      relied_on: { identity_id: id, record_version: 1, digest: metadata.digest },
      identity_is_not_authorization: true,
    });
    expect(result.findings.map((f) => f.outcome)).toEqual(["signature_invalid"]);
    // Even with the signature check skipped, the digest is recomputed, so the alteration is still caught.
    expect((await verifierFor({ signature: "skip-insecure" }).verify(id)).outcome).toBe("signature_invalid");
  });

  it("an altered record with its digest recomputed: signature_invalid (mismatch)", async () => {
    const { id, snapshots } = await publishedVersions(1);
    const { text, metadata } = snapshots[0] as Awaited<ReturnType<typeof snapshot>>;
    const { digest: _, ...content } = PassportRecord.parse(JSON.parse(text));
    const forged = { ...content, display_name: "Verifier test APJ" };
    const resealed = { ...forged, digest: await canonicalDigest(forged) };
    await tamper(id, JSON.stringify(resealed), { ...metadata, digest: resealed.digest });

    const result = await verifierFor({ jwks: pinned() }).verify(id);
    expect(result).toMatchObject({ outcome: "signature_invalid", kind: "mismatch", kid: currentKid() });
    // A verifier that skipped signatures cannot tell: it says so, and never answers ok.
    const unkeyed = await verifierFor({ signature: "skip-insecure" }).verify(id);
    expect(unkeyed).toMatchObject({
      outcome: "ok_signature_skipped",
      ok: false,
      proof: { signature: "skipped_insecure" },
    });
  });

  it("a swapped signature (another record's, set by a proxy on the way): signature_invalid (mismatch)", async () => {
    const { id } = await publishedVersions(1);
    const other = await publishedVersions(1);
    const otherSignature = (other.snapshots[0]?.metadata.signature ?? "") as string;
    const proxy: FetchLike = async (input, init) => {
      const real = await resolverFetch(input, init);
      if (!input.endsWith(`${id}.json`)) return real;
      const headers = new Headers(real.headers);
      headers.set("passport-signature", otherSignature);
      return new Response(real.body, { status: real.status, headers });
    };
    const result = await verifierFor({ jwks: pinned(), fetch: proxy }).verify(id);
    expect(result).toMatchObject({ outcome: "signature_invalid", kind: "mismatch", next_step: "deny" });
  });

  it("a signature stripped on the way: signature_invalid (missing), as signatures are always required with keys", async () => {
    const { id } = await publishedVersions(1);
    const stripping: FetchLike = async (input, init) => {
      const real = await resolverFetch(input, init);
      const headers = new Headers(real.headers);
      headers.delete("passport-signature");
      return new Response(real.body, { status: real.status, headers });
    };
    const strict = await verifierFor({ jwks: pinned(), fetch: stripping }).verify(id);
    expect(strict).toMatchObject({ outcome: "signature_invalid", kind: "missing" });
    expect(() => new Verifier({ resolver: RESOLVER })).toThrow(/jwks is required/);
  });

  it("a record signed with a key the consumer does not trust: unknown_key, naming the key", async () => {
    const { id, snapshots } = await publishedVersions(1);
    const { text, metadata } = snapshots[0] as Awaited<ReturnType<typeof snapshot>>;
    const stranger = await signingKeyPair("ES256");
    await tamper(id, text, { ...metadata, signature: await signWith(stranger.privateJwk, JSON.parse(text)) });

    const result = await verifierFor({ jwks: pinned() }).verify(id);
    expect(result).toMatchObject({
      outcome: "unknown_key",
      kid: JSON.parse(stranger.publicJwk).kid,
      trusted_kids: [currentKid()],
      signed: "record",
      next_step: "challenge",
    });
    // The same record checked against the stranger's key verifies: the outcome was about trust, not bytes.
    const trusting = await verifierFor({ jwks: { keys: [JSON.parse(stranger.publicJwk)] } }).verify(id);
    expect(trusting).toMatchObject({ outcome: "ok", proof: { signature: "verified" } });
  });

  it("an older version replayed as current: history_broken (rollback) against the published history", async () => {
    const { id, snapshots } = await publishedVersions(3);
    const first = snapshots[0] as Awaited<ReturnType<typeof snapshot>>;
    await tamper(id, first.text, first.metadata);

    // Validly signed, so the record alone looks fine; only the chain shows it is not current.
    expect((await verifierFor({ jwks: pinned() }).verify(id)).outcome).toBe("ok");
    // Right after version 3 was published, the older copy may be a cache that has not caught up.
    expect(await verifierFor({ jwks: pinned() }).verify(id, { history: true })).toMatchObject({
      outcome: "stale",
      next_step: "re-resolve",
      stale: [{ what: "propagation", lagging: "record", newer_version: 3 }],
    });
    const result = await verifierFor({ jwks: pinned(), now: afterPropagation }).verify(id, { history: true });
    expect(result).toMatchObject({
      outcome: "history_broken",
      kind: "rollback",
      against: "published_history",
      at_version: 1,
      expected: snapshots[2]?.metadata.digest,
      actual: first.metadata.digest,
      next_step: "re-resolve",
      relied_on: { record_version: 1, digest: first.metadata.digest },
    });
  });

  it("an older version replayed after a newer one was seen: history_broken (rollback), from the cache or the caller's note", async () => {
    const { id, snapshots } = await publishedVersions(2);
    let clock = Date.now;
    const verifier = verifierFor({ jwks: pinned(), now: () => clock() });
    const seen = await verifier.verify(id, { consequence: "higher" });
    expect(seen).toMatchObject({ outcome: "ok", relied_on: { record_version: 2 } });

    const first = snapshots[0] as Awaited<ReturnType<typeof snapshot>>;
    await tamper(id, first.text, first.metadata);
    // The cached copy says when version 2 was published: just now, so another location may lag.
    expect(await verifier.verify(id, { consequence: "higher" })).toMatchObject({
      outcome: "stale",
      stale: [{ what: "propagation", lagging: "record", newer_version: 2 }],
    });
    clock = afterPropagation;
    const replayed = await verifier.verify(id, { consequence: "higher" });
    expect(replayed).toMatchObject({
      outcome: "history_broken",
      kind: "rollback",
      against: "seen_version",
      at_version: 1,
      expected: snapshots[1]?.metadata.digest,
    });
    // The copy seen before is kept, so asking again still refuses the older version.
    expect((await verifier.verify(id, { consequence: "higher" })).outcome).toBe("history_broken");

    const second = snapshots[1]?.metadata as SnapshotMetadata;
    const remembered = await verifierFor({ jwks: pinned() }).verify(id, {
      seen: { record_version: 2, digest: second.digest },
    });
    expect(remembered).toMatchObject({ outcome: "history_broken", kind: "rollback", against: "seen_version" });
  });

  it("a gap in the history (a version's entry removed): history_broken (gap) where the chain breaks", async () => {
    const { id, snapshots } = await publishedVersions(3);
    await env.SNAPSHOTS.delete(historyKey(id, 2));

    // Entries reach a location one by one, so right after version 3 a missing one is not yet a gap.
    expect(await verifierFor({ jwks: pinned() }).verify(id, { history: true })).toMatchObject({
      outcome: "stale",
      stale: [{ what: "propagation", lagging: "history", newer_version: 3 }],
    });
    const result = await verifierFor({ jwks: pinned(), now: afterPropagation }).verify(id, { history: true });
    expect(result).toMatchObject({
      outcome: "history_broken",
      kind: "gap",
      against: "published_history",
      at_version: 3,
      expected: snapshots[0]?.metadata.digest,
      actual: snapshots[1]?.metadata.digest,
      next_step: "deny",
    });
  });

  it("a forged history entry (its signature no longer matches): history_broken (entry_signature_invalid)", async () => {
    const { id } = await publishedVersions(2);
    const stored = await env.SNAPSHOTS.get<Record<string, unknown>>(historyKey(id, 1), "json");
    const forged = { ...stored, published_at: "2020-01-01T00:00:00.000Z" };
    await env.SNAPSHOTS.put(historyKey(id, 1), JSON.stringify(forged), { metadata: forged });

    const result = await verifierFor({ jwks: pinned() }).verify(id, { history: true });
    expect(result).toMatchObject({ outcome: "history_broken", kind: "entry_signature_invalid", at_version: 1 });
  });
});

describe("key rotation", () => {
  it("records signed with the previous key verify while it is listed, and fail as unknown_key once it is removed", async () => {
    const before = await publishedVersions(2); // signed with the current key, which becomes the previous one
    const next = await signingKeyPair("ES256");
    const after = await publishedVersions(1);
    // Republished by the real publisher (the passport's sequencer) under the new key, as step 3 of docs/signing.md does.
    await withSequencerEnv(after.id, { SIGNING_KEY: next.privateJwk }, () => publishPassport(env, after.id));
    const newKid = JSON.parse(next.publicJwk).kid as string;

    const rotated: JwkSet = { keys: [JSON.parse(next.publicJwk), ...pinned().keys] };
    const both = verifierFor({ jwks: rotated });
    expect(await both.verify(before.id, { history: true })).toMatchObject({
      outcome: "ok",
      proof: { kid: currentKid(), history: "verified" },
    });
    expect(await both.verify(after.id, { history: true })).toMatchObject({
      outcome: "ok",
      proof: { kid: newKid, history: "verified" },
    });

    const retired: JwkSet = { keys: [JSON.parse(next.publicJwk)] };
    const onlyNew = verifierFor({ jwks: retired });
    expect(await onlyNew.verify(before.id)).toMatchObject({
      outcome: "unknown_key",
      kid: currentKid(),
      trusted_kids: [newKid],
      signed: "record",
    });
    expect((await onlyNew.verify(after.id, { history: true })).outcome).toBe("ok");
  });

  it("a copy cached under keys that trusted its signer is not reused by a verifier that does not", async () => {
    const { id } = await publishedVersions(1);
    const shared = new RecordCache();
    expect((await verifierFor({ jwks: pinned(), cache: shared }).verify(id)).outcome).toBe("ok");
    const stranger = await signingKeyPair("ES256");
    const other = await verifierFor({ jwks: { keys: [JSON.parse(stranger.publicJwk)] }, cache: shared }).verify(id);
    expect(other).toMatchObject({ outcome: "unknown_key", kid: currentKid(), source: { from_cache: false } });
  });
});

describe("passport verify with trusted keys", () => {
  async function passport(
    args: string[],
    files: Record<string, string> = {},
    fetch: FetchLike = resolverFetch,
    now: () => number = Date.now,
  ) {
    const out: string[] = [];
    const code = await run(args, {
      stdout: (text) => out.push(text),
      stderr: (text) => out.push(text),
      env: { PASSPORT_RESOLVER: RESOLVER },
      fetch,
      now,
      readFile: async (path) => {
        const text = files[path];
        if (text === undefined) throw new Error("ENOENT");
        return text;
      },
    });
    return { code, stdout: out.join("\n") };
  }

  it("shows what was verified, and exits 4 for each proof failure", async () => {
    const { id, snapshots } = await publishedVersions(2);
    const files = { "keys.json": env.TEST_SIGNING_JWKS };
    const ok = await passport(["verify", id, "--jwks", "keys.json", "--history"], files);
    expect(ok.code).toBe(EXIT.ok);
    expect(ok.stdout).toContain(
      `Integrity:  digest verified; signature verified (key ${currentKid()}); history verified`,
    );

    const unkeyed = await passport(["verify", id, "--insecure-no-signature"]);
    expect(unkeyed.code).toBe(EXIT.unsigned);
    expect(unkeyed.stdout).toContain("signature NOT CHECKED (--insecure-no-signature; pass --jwks)");

    const first = snapshots[0] as Awaited<ReturnType<typeof snapshot>>;
    await tamper(id, first.text, first.metadata);
    const args = ["verify", id, "--jwks", "keys.json", "--history", "--json"];
    const propagating = await passport(args, files);
    expect(propagating.code).toBe(EXIT.failed);
    expect(JSON.parse(propagating.stdout)).toMatchObject({ outcome: "stale", stale: [{ what: "propagation" }] });
    const replay = await passport(args, files, resolverFetch, afterPropagation);
    expect(replay.code).toBe(EXIT.proof);
    expect(JSON.parse(replay.stdout)).toMatchObject({ outcome: "history_broken", kind: "rollback" });

    const second = snapshots[1]?.metadata as SnapshotMetadata;
    const seen = await passport(["verify", id, "--jwks", "keys.json", "--seen", `2:${second.digest}`], files);
    expect(seen.code).toBe(EXIT.proof);
    expect(seen.stdout).toMatch(/^FAIL\s+history_broken/);
    expect(seen.stdout).toContain("Problem:    rollback at version 1 (against the version seen before)");

    await tamper(id, first.text.replace("Verifier test API", "Verifier test APJ"), first.metadata);
    const altered = await passport(["resolve", id, "--jwks", "keys.json"], files);
    expect(altered.code).toBe(EXIT.proof);
    expect(altered.stdout).toContain("Problem:    digest_mismatch");
  });

  it("refuses a check without keys or opt-out, and a key file that is not a key set, as usage errors", async () => {
    const id = (await publishedVersions(1)).id;
    expect((await passport(["verify", id])).code).toBe(EXIT.usage);
    expect((await passport(["verify", id, "--jwks", "missing.json"])).code).toBe(EXIT.usage);
    expect((await passport(["verify", id, "--jwks", "bad.json"], { "bad.json": '{"keys":[]}' })).code).toBe(EXIT.usage);
    expect((await passport(["verify", id, "--insecure-no-signature", "--seen", "two:sha-256:x"])).code).toBe(
      EXIT.usage,
    );
  });
});
