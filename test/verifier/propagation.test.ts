import { env } from "cloudflare:workers";
import { type FeedEntry, type SnapshotMetadata, snapshotKey } from "@passport/domain";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import {
  type Consequence,
  type FetchLike,
  MemoryCheckpointStore,
  TileCache,
  Verifier,
  type VerifyOutcome,
} from "../../packages/verifier/src/index.ts";
import { type KvWrite, MultiLocationKv, type VisibilityDelay } from "./propagation/kv-model.ts";
import { recordTrace, seeded, type Trace } from "./propagation/trace.ts";
import { authorityAt, RESOLVER, World } from "./propagation/world.ts";

/**
 * The propagation property (issue 26 item 4, docs/propagation-model.md): an honest service, seen
 * from several locations whose KV and edge cache lag independently per key, never makes the
 * verifier report tampering, a split view or a broken chain, never lets a decision accept a
 * version superseded for longer than docs/freshness.md allows, and passes every check once
 * everything has propagated. `PROPAGATION_RUNS=20000 pnpm run test:propagation` runs it longer.
 */

const RUNS = Number(env.TEST_PROPAGATION_RUNS) || 1000;
const SEED = Number(env.TEST_PROPAGATION_SEED) || Math.floor(Math.random() * 2 ** 31);
const OPERATIONS = 18;
const LOCATIONS = 4;
const READERS = 3;

/** docs/freshness.md: K (KV propagation), E (edge), C (clients, the verifier's own copy). */
const K = 60_000;
const E = 30_000;
const C = 15_000;
/** A KV miss cached for cacheTtl just before the write adds another K. */
const SETTLED = 2 * K + E + 5_000 + 15_000;

/**
 * What an honest service may make the verifier say while changes propagate: a decision, or "not
 * yet" (retry, stale, newest unverified, a record beyond the newest checkpoint). Never tampering,
 * a split view, a rollback or a broken chain.
 */
const WHILE_PROPAGATING = new Set<string>([
  "ok",
  "state_not_operative",
  "not_found",
  "network_failure",
  "stale/propagation(record)",
  "stale/propagation(history)",
  "stale/propagation(log)",
  "stale/status",
  "stale/recheck_required",
  "newest_unverified",
  "not_in_log/beyond_checkpoint",
]);

/**
 * Whether an outcome is one an honest service may cause: in the set, or `stale` with every one of
 * its items allowed on its own (a lagging record can be stale on its status token and on its own
 * state at once, e.g. a stapled token from before a reactivation awaiting its re-check).
 */
function allowedWhilePropagating(name: string): boolean {
  if (WHILE_PROPAGATING.has(name)) return true;
  if (!name.startsWith("stale/")) return false;
  return name
    .slice("stale/".length)
    .split("+")
    .every((item) => WHILE_PROPAGATING.has(`stale/${item}`));
}

/** The outcome, with the kind that decides whether it is allowed. */
function outcomeName(result: VerifyOutcome): string {
  if (result.outcome === "not_in_log") return `not_in_log/${result.kind}`;
  if (result.outcome === "stale") {
    const items = result.stale.map((item) => (item.lagging ? `${item.what}(${item.lagging})` : item.what));
    return `stale/${[...new Set(items)].join("+")}`;
  }
  return result.outcome;
}

type Profile = "instant" | "uniform" | "extremes" | "one-slow-location";

interface Read {
  reader: number;
  location: number;
  /** ms after the trace's first write */
  offset: number;
  passport: number;
  consequence: Consequence;
  history: boolean;
  /**
   * At `higher`: the reader also has a stapled status token, fetched from the status route at its
   * location this many ms before the read (as an API provider staples the token it holds). With
   * the log, a usable one that names the record stands in for the newest-version scan.
   */
  stapledAgo?: number;
  /** The run's read of the revoked passport, after its revocation (see `revocationRead`). */
  revocation?: true;
}

interface Scenario {
  profile: Profile;
  delaySeed: number;
  purgesRefused: 0 | 0.3 | 1;
  outages: { location: number; offset: number; length: number }[];
  reads: Read[];
  /** A mirror reading the whole feed at this location and time (ms after the first write). */
  feed: { location: number; offset: number };
  /** Where, which passport and by whom the settled world is checked. */
  settled: { location: number; passport: number; reader: number };
  /**
   * Every run also reads the trace's revoked passport once the revocation must be refused: at
   * `higher` from when the control plane answered it, else K + E + C after it was published;
   * `after` ms later than that.
   */
  revoked: { reader: number; location: number; consequence: Consequence; history: boolean; after: number };
}

function delays(profile: Profile, seed: number): VisibilityDelay {
  const cache = new Map<string, number>();
  return (_write, index, location) => {
    const key = `${index}:${location}`;
    let delay = cache.get(key);
    if (delay === undefined) {
      const r = seeded(seed ^ Math.imul(index + 1, 0x9e3779b1) ^ Math.imul(location + 1, 0x85ebca6b))();
      delay =
        profile === "instant"
          ? 0
          : profile === "uniform"
            ? Math.floor(r * K)
            : profile === "extremes"
              ? r < 0.5
                ? 0
                : K
              : location === 0
                ? K
                : Math.floor(r * 2000);
      cache.set(key, delay);
    }
    return delay;
  };
}

function scenario(span: number, passports: number): fc.Arbitrary<Scenario> {
  const read = fc.record({
    reader: fc.integer({ min: 0, max: READERS - 1 }),
    location: fc.integer({ min: 0, max: LOCATIONS - 1 }),
    offset: fc.oneof(fc.integer({ min: 0, max: span }), fc.integer({ min: 0, max: span + SETTLED })),
    passport: fc.integer({ min: 0, max: passports - 1 }),
    consequence: fc.constantFrom<Consequence>("lower", "changing", "higher"),
    history: fc.boolean(),
    stapledAgo: fc.option(fc.integer({ min: 0, max: 40_000 }), { nil: undefined }),
  });
  return fc.record({
    profile: fc.constantFrom<Profile>("instant", "uniform", "extremes", "one-slow-location"),
    delaySeed: fc.integer(),
    purgesRefused: fc.constantFrom<0 | 0.3 | 1>(0, 0.3, 1),
    outages: fc.array(
      fc.record({
        location: fc.integer({ min: 0, max: LOCATIONS - 1 }),
        offset: fc.integer({ min: 0, max: span + K }),
        length: fc.integer({ min: 1000, max: 30_000 }),
      }),
      { maxLength: 2 },
    ),
    // Five at most: with the revocation read, a run makes about as many reads as six did before.
    reads: fc.array(read, { minLength: 1, maxLength: 5 }),
    feed: fc.record({
      location: fc.integer({ min: 0, max: LOCATIONS - 1 }),
      offset: fc.integer({ min: 0, max: span + K }),
    }),
    settled: fc.record({
      location: fc.integer({ min: 0, max: LOCATIONS - 1 }),
      passport: fc.integer({ min: 0, max: passports - 1 }),
      reader: fc.integer({ min: 0, max: READERS - 1 }),
    }),
    revoked: fc.record({
      reader: fc.integer({ min: 0, max: READERS - 1 }),
      location: fc.integer({ min: 0, max: LOCATIONS - 1 }),
      consequence: fc.constantFrom<Consequence>("lower", "changing", "higher"),
      history: fc.boolean(),
      after: fc.integer({ min: 0, max: span }),
    }),
  });
}

/** When each version of each passport reached KV (its first snapshot write), from the trace. */
function snapshotTimes(writes: readonly KvWrite[]): Map<string, Map<number, number>> {
  const times = new Map<string, Map<number, number>>();
  for (const write of writes) {
    if (!write.key.startsWith("passport:")) continue;
    const id = write.key.slice("passport:".length);
    const version = (write.metadata as SnapshotMetadata).record_version;
    const versions = times.get(id) ?? new Map<number, number>();
    if (!versions.has(version)) versions.set(version, write.at);
    times.set(id, versions);
  }
  return times;
}

/** Reads the whole feed from the start, following `next`, as a mirror does. */
async function readWholeFeed(fetch: FetchLike): Promise<FeedEntry[]> {
  const entries: FeedEntry[] = [];
  let url = `${RESOLVER}/api/feed.json`;
  for (let page = 0; page < 100; page++) {
    const answer = await fetch(url);
    expect(answer.status, `${url}: ${answer.status}`).toBe(200);
    const body = (await answer.json()) as { entries: FeedEntry[]; more: boolean; next: string };
    entries.push(...body.entries);
    if (!body.more) return entries;
    url = body.next;
  }
  throw new Error("the feed never ended");
}

describe("propagation across locations (docs/propagation-model.md)", () => {
  let trace: Trace;
  let published: Map<string, Map<number, number>>;
  let digests: Map<string, number>;
  /** Every feed entry the control plane wrote, by sequence number. */
  let feed: Map<number, FeedEntry>;
  let start: number;
  let end: number;
  /** The trace's first revocation: when the control plane answered it, and when its record reached KV. */
  let revocation: { passport: number; answeredAt: number; publishedAt: number };

  // The modelled outages make the control plane and the resolver log every failed KV call.
  const consoleError = console.error;
  afterAll(() => {
    console.error = consoleError;
  });

  beforeAll(async () => {
    console.error = (...args: unknown[]) => {
      if (!String(args[0]).includes("modelled outage")) consoleError(...args);
    };
    trace = await recordTrace(SEED, OPERATIONS);
    published = snapshotTimes(trace.writes);
    digests = new Map(
      trace.writes
        .filter((w) => w.key.startsWith("passport:"))
        .map((w) => [(w.metadata as SnapshotMetadata).digest, (w.metadata as SnapshotMetadata).record_version]),
    );
    feed = new Map(
      trace.writes
        .filter((w) => w.key.startsWith("feed:"))
        .map((w) => [(w.metadata as FeedEntry).seq, w.metadata as FeedEntry]),
    );
    start = trace.writes[0]?.at ?? 0;
    end = trace.writes.at(-1)?.at ?? 0;
    const answer = trace.answers.find((a) => a.lifecycle === "revoked");
    const write = trace.writes.find(
      (w) =>
        w.key === snapshotKey(answer?.identityId ?? "") &&
        (JSON.parse(w.value as string) as { state: { lifecycle: string } }).state.lifecycle === "revoked",
    );
    if (!answer || !write) throw new Error(`the trace revoked nothing, or never published it: ${trace.operations}`);
    revocation = { passport: trace.passports.indexOf(answer.identityId), answeredAt: answer.at, publishedAt: write.at };
  }, 120_000);

  /** The run's read of the revoked passport, at a time the revocation must already be refused. */
  const revocationRead = (r: Scenario["revoked"]): Read => ({
    reader: r.reader,
    location: r.location,
    offset:
      (r.consequence === "higher" ? revocation.answeredAt : revocation.publishedAt + K + E + C + 1) + r.after - start,
    passport: revocation.passport,
    consequence: r.consequence,
    history: r.history,
    revocation: true,
  });

  /** Seconds by which version `version` of `id` was superseded at `now` (0 when it is the newest published). */
  const supersededFor = (id: string, version: number, now: number): number => {
    let first = Number.POSITIVE_INFINITY;
    for (const [v, at] of published.get(id) ?? []) if (v > version && at < first) first = at;
    return Math.max(0, now - first);
  };

  /** The state of the newest version published by `at`. */
  const stateAt = (id: string, at: number): { lifecycle: string; recheck_required: boolean } | undefined => {
    const write = trace.writes.filter((w) => w.key === snapshotKey(id) && w.at <= at).at(-1);
    return write
      ? (JSON.parse(write.value as string) as { state: { lifecycle: string; recheck_required: boolean } }).state
      : undefined;
  };
  const lifecycleAt = (id: string, at: number) => stateAt(id, at)?.lifecycle;
  /** What the verifier must say of the newest version once everything has propagated. */
  const settledOutcome = (id: string) => {
    const state = stateAt(id, end);
    if (state?.lifecycle !== "active") return "state_not_operative";
    return state.recheck_required ? "stale/recheck_required" : "ok";
  };

  it(`holds the invariants over ${RUNS} runs`, { timeout: 600_000 }, async () => {
    const jwks = JSON.parse(env.TEST_SIGNING_JWKS);
    // Each request attempt arms AbortSignal.timeout, and workerd's clock stands still without I/O,
    // so none of them fires and a long run reaches the isolate's 10,000 active timers. The model's
    // answers are in-process and never hang: the runs use signals that never time out.
    const timeout = AbortSignal.timeout;
    AbortSignal.timeout = () => new AbortController().signal;
    onTestFinished(() => {
      AbortSignal.timeout = timeout;
    });
    const seen = new Map<string, number>();
    let higherAccepted = 0;
    let stapledAccepted = 0;
    let scanReplaced = 0;
    let lowerAccepted = 0;
    const refusedRevocations = { lower: 0, changing: 0, higher: 0 };
    const started = Date.now();
    let reads = 0;
    const context = () => `seed ${SEED}; operations: ${trace.operations.join(", ")}`;
    // Every trace suspends, reactivates and revokes (propagation/trace.ts), so every run reads across them.
    for (const kind of ["suspended", "active", "revoke"]) {
      expect(
        trace.operations.some((op) => op.startsWith(`${kind} `)),
        `no "${kind}" operation; ${context()}`,
      ).toBe(true);
    }
    await fc.assert(
      fc.asyncProperty(scenario(end - start, trace.passports.length), async (s) => {
        const outages = new Map<number, { from: number; to: number }[]>();
        for (const o of s.outages) {
          const list = outages.get(o.location) ?? [];
          list.push({ from: start + o.offset, to: start + o.offset + o.length });
          outages.set(o.location, list);
        }
        const kv = new MultiLocationKv(trace.writes, delays(s.profile, s.delaySeed), outages);
        const refused = seeded(s.delaySeed ^ 0x5bd1e995);
        const world = new World(trace, kv, () => refused() < s.purgesRefused);
        let location = 0;
        const tiles = new TileCache();
        const verifiers = Array.from(
          { length: READERS },
          () =>
            new Verifier({
              resolver: RESOLVER,
              fetch: (input, init) => world.fetchAt(location)(input, init),
              jwks,
              retries: 0,
              now: () => world.now,
              log: { key: env.TEST_LOG_VERIFIER_KEY, maxAge: "1h", store: new MemoryCheckpointStore(), cache: tiles },
            }),
        );
        /** The token the status route answered at this location at `at`, if any (a provider's stapled copy). */
        const stapledAt = async (at: number, id: string): Promise<string | undefined> => {
          world.now = at;
          const response = await world.fetchAt(location)(`${RESOLVER}/api/p/${id}/status`);
          return response.status === 200 ? ((await response.json()) as { token: string }).token : undefined;
        };
        const check = async (
          reader: number,
          at: number,
          id: string,
          consequence: Consequence,
          history: boolean,
          statusToken?: string,
        ) => {
          world.now = at;
          const result = await (verifiers[reader] as Verifier).verify(id, {
            family: "api",
            consequence,
            history,
            ...(statusToken ? { statusToken } : {}),
          });
          reads++;
          seen.set(outcomeName(result), (seen.get(outcomeName(result)) ?? 0) + 1);
          const version = digests.get(result.source?.etag?.replaceAll('"', "") ?? "");
          return { result, version };
        };
        const describeRead = (what: string, result: VerifyOutcome) =>
          `${what}: ${result.outcome} (${"reason" in result ? result.reason : ""}); ${context()}`;

        const ordered = [...s.reads, revocationRead(s.revoked)].sort((a, b) => a.offset - b.offset);
        for (const read of ordered) {
          location = read.location;
          const id = trace.passports[read.passport] as string;
          const at = start + read.offset;
          const stapledFrom =
            read.consequence === "higher" && read.stapledAgo !== undefined ? at - read.stapledAgo : undefined;
          const statusToken = stapledFrom === undefined ? undefined : await stapledAt(stapledFrom, id);
          const { result, version } = await check(read.reader, at, id, read.consequence, read.history, statusToken);
          const what = `reader ${read.reader} at location ${read.location}, ${read.offset} ms, ${read.consequence}${read.history ? " with history" : ""}, ${id}`;
          // 1. Never tampering, a split view or a broken chain for the honest service.
          expect(allowedWhilePropagating(outcomeName(result)), describeRead(what, result)).toBe(true);
          if (result.outcome === "ok") {
            expect(version, describeRead(what, result)).toBeDefined();
            const lag = supersededFor(id, version as number, at);
            if (read.consequence === "higher") {
              higherAccepted++;
              // 2. A higher decision rests on a status token from the authoritative state: it
              // accepts only the newest version written, with nothing pending, and refuses a
              // revocation (any lifecycle but active) as soon as the control plane answered it.
              // A stapled token states that as of when it was fetched, and is accepted only within
              // the decision's status age (30 s): the record was current then, and is superseded
              // by no more than the token's age now.
              const stapled = result.proof?.status?.source === "stapled";
              const asOf = stapled ? (stapledFrom as number) : at;
              if (stapled) {
                stapledAccepted++;
                if (result.proof?.log?.newest === "status_token") scanReplaced++;
                expect(at - asOf, describeRead(what, result)).toBeLessThanOrEqual(30_000 + 1000);
              }
              const authority = authorityAt(trace, id, asOf);
              expect(authority, describeRead(what, result)).toMatchObject({
                found: true,
                publication: "published",
                record_version: version,
                lifecycle: "active",
              });
              expect(lag, `${describeRead(what, result)}; version ${version} superseded`).toBeLessThanOrEqual(
                at - asOf,
              );
            } else {
              // 3. Lower and changing read the record through the caches: at most K + E + C behind
              // the publication that superseded it, and a revocation is refused within that bound.
              lowerAccepted++;
              const bound = K + E + C;
              expect(
                lag,
                `${describeRead(what, result)}; accepted version ${version} superseded ${lag} ms`,
              ).toBeLessThanOrEqual(bound);
              expect(lifecycleAt(id, at - bound), describeRead(what, result)).not.toBe("revoked");
            }
          }
          if (read.revocation) {
            // 2 and 3 on a revocation, every run: past the bound above, the revoked passport is
            // never accepted, whichever location, reader and consequence.
            expect(result.outcome, `revocation refused: ${describeRead(what, result)}`).not.toBe("ok");
            refusedRevocations[read.consequence]++;
          }
        }

        // 5. The feed a mirror reads is in order and every entry is one the control plane wrote;
        // a location may not show some yet (docs/resolver.md: a mirror re-reads the last pages).
        // Outages are left out: a mirror's failed read is retried, and says nothing.
        location = s.feed.location;
        world.now = start + s.feed.offset;
        const outage = s.outages.some(
          (o) => o.location === location && o.offset <= s.feed.offset && s.feed.offset < o.offset + o.length,
        );
        if (!outage) {
          const served = await readWholeFeed(world.fetchAt(location));
          served.forEach((entry, i) => {
            expect(entry, `feed entry ${entry.seq}; ${context()}`).toEqual(feed.get(entry.seq));
            if (i > 0) expect(entry.seq).toBeGreaterThan((served[i - 1] as FeedEntry).seq);
          });
        }

        // 4. Once everything has propagated, every check passes, on the newest version (one
        // passport, location and reader per run; the runs cover the combinations).
        location = s.settled.location;
        const id = trace.passports[s.settled.passport] as string;
        const newest = Math.max(...(published.get(id)?.keys() ?? []));
        const { result, version } = await check(s.settled.reader, end + SETTLED, id, "higher", true);
        const what = `settled: reader ${s.settled.reader} at location ${location}, ${id}`;
        expect(outcomeName(result), describeRead(what, result)).toBe(settledOutcome(id));
        expect(version, describeRead(what, result)).toBe(newest);
        // 5. ... and once settled the feed holds every publication, at any location.
        const complete = await readWholeFeed(world.fetchAt(location));
        expect(
          complete.map((entry) => entry.seq),
          `settled feed at location ${location}; ${context()}`,
        ).toEqual([...feed.keys()].sort((a, b) => a - b));
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const outcomes = [...seen]
      .sort((a, b) => b[1] - a[1])
      .map(([name, n]) => `${name} ${n}`)
      .join(", ");
    console.log(
      [
        `propagation: ${RUNS} runs, ${reads} verifications in ${seconds} s (history seed ${SEED}: ${trace.operations.length} operations, ${trace.writes.length} KV writes)`,
        "invariants: (1) while propagating, only a decision or not-yet (no tampering, split view, rollback or broken chain);",
        "  (2) higher, with a status token: only the newest written version, nothing pending, no answered revocation",
        "      (with a stapled token: as of when it was fetched, at most 30 s before, the scan replaced by it);",
        "  (3) lower, changing: an accepted version superseded at most K+E+C before, no revocation accepted past that;",
        "  (4) once settled, every check passes on the newest version;",
        "  (5) the feed is in order and genuine while propagating, and complete once settled",
        `outcomes seen: ${outcomes}; higher decisions accepted while propagating: ${higherAccepted} (${stapledAccepted} on a stapled token, ${scanReplaced} of them without the log's newest scan); lower or changing: ${lowerAccepted}`,
        `the revoked passport refused once per run: ${refusedRevocations.higher} higher, ${refusedRevocations.lower} lower, ${refusedRevocations.changing} changing`,
      ].join("\n"),
    );
    // Invariants 2 and 3 hold only of accepted reads: the runs must have accepted some of each kind,
    // on a stapled token too, and refused the revocation at every consequence.
    expect(higherAccepted, "no higher decision was accepted").toBeGreaterThan(0);
    expect(stapledAccepted, `no decision rested on a stapled token; ${context()}`).toBeGreaterThan(0);
    expect(lowerAccepted, "no lower or changing read was accepted").toBeGreaterThan(0);
    expect(refusedRevocations.lower + refusedRevocations.changing + refusedRevocations.higher).toBeGreaterThanOrEqual(
      RUNS,
    );
    for (const [consequence, n] of Object.entries(refusedRevocations)) {
      expect(n, `no ${consequence} read of the revoked passport`).toBeGreaterThan(0);
    }
    // The model must actually make locations disagree, or the invariants were never tested.
    const lagging = [...seen].filter(([name]) => name.startsWith("stale/propagation")).reduce((n, [, c]) => n + c, 0);
    expect(lagging, "no read saw publication in progress").toBeGreaterThan(0);
  });
});
