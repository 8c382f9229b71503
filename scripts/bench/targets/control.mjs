// `npm run bench -- control`: the control plane bundle in workerd with real local D1 (two shards and
// the directory, the bench organisation in shard 1) and KV, its publication sequencer and the
// resolver beside it. It prints the storage calls of each write route,
// then measures lists, a page deep in the list and search at 1,000, 10,000 and 100,000 passports
// and create-and-publish, PATCH and state change at 100,000, each against the storage floor of the
// same work (scripts/bench/README.md), and exits 1 when a target is missed.
import { join } from "node:path";
import { DEVELOPMENT_ISSUER, mintIdentityId, snapshotKey } from "@passport/domain";
import { base64url, importJWK, SignJWT } from "jose";
import { compatibilityDate } from "../../compatibility-date.ts";
import { logKeyPair, signingKeyPair } from "../../dev-keys.mjs";
import { comparePairs } from "../lib/compare.mjs";
import { controlVars, LOG_ORIGIN } from "../lib/control-vars.mjs";
import { load } from "../lib/h2load.mjs";
import { applyMigrations, ORGANISATION, SUBJECT, seedOrganisation } from "../lib/migrations.mjs";
import { profileWhile } from "../lib/profile.mjs";
import { bundle, freePort, serve } from "../lib/workers.mjs";

export const description =
  "control plane writes and lists at 1,000, 10,000 and 100,000 passports against D1/KV floors; statement counts";

/**
 * The default rounds and length with a shorter warm-up: 17 pairs take about a quarter of an hour on
 * two cores. Shorter runs (5 rounds of 2 s) moved a list cell's median by about 0.1 between runs.
 */
export const defaults = { rounds: 7, seconds: 3, warmup: 1 };

const SIZES = (process.env.BENCH_SIZES ?? "1000,100000").split(",").map(Number);
/** `lists`, `writes` or both (the default): which half of the target to measure, for a quicker look at one. */
const PARTS = new Set((process.env.BENCH_PARTS ?? "lists,writes").split(","));
/**
 * `BENCH_PROFILE=<path name>` (a write or list path of this target, e.g. `create`): instead of
 * measuring, takes a V8 CPU profile of the control plane's isolate (its fetch handler, sequencer
 * and log) while that path runs under load, writes it to .bench/control-<name>.cpuprofile and
 * prints where the time went.
 */
const PROFILE = process.env.BENCH_PROFILE;
/** `BENCH_WRITES=create,patch,…`: only these write pairs (their keys, as for BENCH_PROFILE), for a quicker look. */
const WRITES = process.env.BENCH_WRITES?.split(",");
/**
 * The control plane runs two shards and the directory, as `npm start` and the tests do
 * (docs/sharding.md). The bench organisation lives in shard BENCH_SHARD (default 1, which a request
 * reaches only through the routing) and a neighbour organisation with passports of its own in the
 * other, so the lists and search are measured with the routing and organisations in both shards.
 */
const SHARDS = ["DB", "DB_SHARD_1"];
const BENCH_SHARD = Number(process.env.BENCH_SHARD ?? 1);
const NEIGHBOUR = { organisation: "org_bench_neighbour", owner: "bench-neighbour-owner", passports: 1000 };
/** The control plane's rate limits (workers/control/wrangler.toml), bound generously: the bench measures the routes. */
const LIMITS = {
  FULFILL_PER_CLIENT: "1001",
  FULFILL_CEILING: "1002",
  EVENTS_PER_CLIENT: "1003",
  SIGN_IN_PER_CLIENT: "1004",
  CLAIMS_PER_SUBJECT: "1005",
  WRITES_PER_SUBJECT: "1006",
  CHECKS_PER_SUBJECT: "1007",
  PUBLIC_READS_PER_CLIENT: "1020",
};
const SEED_CHUNK = 2000;
/** Passports the PATCH and state-change runs take in turn, so concurrent requests change different ones. */
const POOL = 2000;
/** Items per batch in the batch-against-single-creates pair. */
const BATCH = 10;

/**
 * Targets: a write's req/s at least 0.85 of the reference making exactly its D1, KV and Durable
 * Object calls, its p99 at most 1.5 times the reference's, and at most 2 D1 round trips before it
 * answers (issue #36: the change and its publication record); a list or search page at least 0.85
 * of its floor at every size, and flat: its ratio at the largest size within 10% of its ratio at
 * the smallest (issue #30).
 */
const TARGETS = { write: 0.85, writeP99: 1.5, writeRoundTrips: 2, list: 0.85, flat: 0.9 };
/** The write routes whose round trips before the answer have a target (rows of `countWrites`). */
const COUNTED_WRITES = ["create", "PATCH display name", "state change", "binding add"];

async function prepare(controlDb, baselineDb) {
  // The baseline database has the control plane's schema too: the write references send its SQL.
  for (const db of [controlDb, baselineDb]) await seedOrganisation(db);
  await baselineDb
    .prepare(
      "CREATE TABLE baseline_rows (id TEXT PRIMARY KEY, organisation_id TEXT NOT NULL DEFAULT 'org_bench', family TEXT NOT NULL DEFAULT 'api', display_name TEXT, lifecycle TEXT NOT NULL DEFAULT 'active', environment TEXT, record_version INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL, updated_at TEXT)",
    )
    .run();
  await baselineDb.batch([
    baselineDb.prepare("CREATE TABLE baseline_steps (row_id TEXT NOT NULL, kind TEXT NOT NULL, at TEXT NOT NULL)"),
    baselineDb.prepare("CREATE INDEX baseline_steps_row ON baseline_steps (row_id, kind)"),
    baselineDb.prepare("CREATE INDEX baseline_rows_org_created ON baseline_rows (organisation_id, created_at, id)"),
    baselineDb.prepare(
      "CREATE INDEX baseline_rows_org_environment_created ON baseline_rows (organisation_id, environment, created_at, id)",
    ),
    // The search floor's table: the control plane's FTS5 table, same columns and options (migration 0011).
    baselineDb.prepare(
      "CREATE VIRTUAL TABLE baseline_search USING fts5(scope, terms, tokenize = 'unicode61', prefix = '1 2 3')",
    ),
  ]);
}

/**
 * Runs a Miniflare D1 call, again if its proxy socket was closed while idle (between load runs the
 * keep-alive connection to Miniflare's proxy can go stale: "fetch failed", EPIPE or "other side
 * closed"; the call then never reached D1, and if it had, the retry fails on the primary key).
 */
async function once(call) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt === 3 || !(error instanceof TypeError && error.message === "fetch failed")) throw error;
    }
  }
}

const START = Date.parse("2026-01-01T00:00:00.000Z");
/** The bench organisation's scope token in the search table (`scopeToken` in workers/control/src/db/search.ts). */
const SEARCH_SCOPE = `o${Buffer.from(ORGANISATION).toString("hex")}`;
const seeded = [];

/**
 * Grows the bench organisation to `count` passports, each with one endpoint binding (so search has
 * binding values to find), and the baseline table to as many rows, directly in D1: one statement
 * per chunk reads the chunk's rows from a JSON parameter. The passports' triggers fill the search
 * table as a create would.
 */
async function seedTo({ controlDb, baselineDb, directoryDb }, count) {
  for (let offset = seeded.length; offset < count; offset += SEED_CHUNK) {
    const rows = [];
    for (let n = offset; n < Math.min(count, offset + SEED_CHUNK); n++) {
      const at = new Date(START + n * 1000).toISOString();
      rows.push({ id: mintIdentityId(), n, at, environment: n % 2 ? "staging" : "production" });
    }
    seeded.push(...rows);
    const json = JSON.stringify(rows);
    // The same passports in the baseline database, whose write references change them.
    for (const db of [controlDb, baselineDb]) await once(() => db.batch(passportStatements(db, ORGANISATION, json)));
    await once(() => registerIdentities(directoryDb, ORGANISATION, json));
    await once(() =>
      baselineDb.batch([
        baselineDb
          .prepare(
            `INSERT INTO baseline_rows (id, display_name, environment, created_at, updated_at)
           SELECT value ->> 'id', 'API ' || (value ->> 'n'), value ->> 'environment', value ->> 'at', value ->> 'at'
           FROM json_each(?)`,
          )
          .bind(json),
        // The terms the control plane's triggers index (migration 0011): id, name, environment, version (none), binding value.
        baselineDb
          .prepare(
            `INSERT INTO baseline_search (rowid, scope, terms)
           SELECT r.rowid, ?, r.id || ' API ' || (j.value ->> 'n') || ' ' || (j.value ->> 'environment') || '  https://api-' || (j.value ->> 'n') || '.bench.example/'
           FROM json_each(?) AS j JOIN baseline_rows AS r ON r.id = j.value ->> 'id'`,
          )
          .bind(SEARCH_SCOPE, json),
      ]),
    );
  }
}

/** A chunk of passports (`rows` as JSON), each with an endpoint binding under `host`, in one organisation of `db`. */
function passportStatements(db, organisation, json, host = "bench.example") {
  return [
    db
      .prepare(
        `INSERT INTO passports (id, organisation_id, family, display_name, environment, state_as_of, created_at, updated_at)
         SELECT value ->> 'id', ?, 'api', 'API ' || (value ->> 'n'), value ->> 'environment', value ->> 'at', value ->> 'at', value ->> 'at'
         FROM json_each(?)`,
      )
      .bind(organisation, json),
    db
      .prepare(
        `INSERT INTO bindings (id, passport_id, class, value, bound_at)
         SELECT lower(hex(randomblob(16))), value ->> 'id', 'endpoint', 'https://api-' || (value ->> 'n') || '.' || ? || '/', value ->> 'at'
         FROM json_each(?)`,
      )
      .bind(host, json),
  ];
}

/** The directory's rows for a chunk of passports of `organisation`, as a create registers each (docs/sharding.md). */
function registerIdentities(directoryDb, organisation, json) {
  return directoryDb
    .prepare(
      "INSERT INTO identity_organisations (identity_id, organisation_id) SELECT value ->> 'id', ? FROM json_each(?)",
    )
    .bind(organisation, json)
    .run();
}

/**
 * Places the bench organisation in shard BENCH_SHARD and a neighbour organisation, with passports
 * of its own, in the other shard, both in the directory as the service places them.
 */
async function placeOrganisations(shardDbs, directoryDb) {
  const neighbourShard = 1 - BENCH_SHARD;
  const neighbourDb = shardDbs[neighbourShard];
  const placed = new Date(START).toISOString();
  await directoryDb.batch(
    [
      [ORGANISATION, BENCH_SHARD],
      [NEIGHBOUR.organisation, neighbourShard],
    ].map(([organisation, shard]) =>
      directoryDb
        .prepare("INSERT INTO organisation_shards (organisation_id, shard, placed_at) VALUES (?, ?, ?)")
        .bind(organisation, shard, placed),
    ),
  );
  await seedOrganisation(neighbourDb, NEIGHBOUR.organisation, NEIGHBOUR.owner);
  const rows = Array.from({ length: NEIGHBOUR.passports }, (_, n) => ({
    id: mintIdentityId(),
    n,
    at: new Date(START + n * 1000).toISOString(),
    environment: "production",
  }));
  const json = JSON.stringify(rows);
  await neighbourDb.batch(passportStatements(neighbourDb, NEIGHBOUR.organisation, json, "neighbour.bench.example"));
  await registerIdentities(directoryDb, NEIGHBOUR.organisation, json);
}

/**
 * Makes each write route's request once, on passports created for it, and returns the D1 round
 * trips and statements and the KV operations each made (counted by the bench wrapper around the
 * bundle, scripts/bench/workers/counting-control.js), publication by the sequencer included.
 */
async function countWrites(api, authorization) {
  const json = { ...authorization, "content-type": "application/json" };
  // Resets the counters; the first call after the load runs may meet a stale keep-alive socket.
  const reset = () => once(async () => (await fetch(`${api}/__bench/counts`)).arrayBuffer());
  const call = async (method, path, body, status) => {
    await reset();
    const response = await fetch(`${api}${path}`, { method, headers: json, body: JSON.stringify(body) });
    if (response.status !== status) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    const answer = await response.json();
    if (answer.publication && answer.publication.status !== "published") {
      throw new Error(`${method} ${path} did not publish: ${JSON.stringify(answer.publication)}`);
    }
    return { answer, counts: await (await fetch(`${api}/__bench/counts`)).json() };
  };
  const unique = () => crypto.randomUUID().slice(0, 8);
  const endpoint = () => ({ class: "endpoint", value: `https://count-${unique()}.bench.example/` });
  const create = (bindings) =>
    call(
      "POST",
      "/v1/passports",
      { family: "api", organisation_id: ORGANISATION, display_name: "Count", bindings },
      201,
    );
  const rows = [];
  const plain = await create([]);
  rows.push(["create", plain.counts]);
  rows.push(["create with an endpoint binding", (await create([endpoint()])).counts]);
  const id = plain.answer.identity_id;
  rows.push([
    "PATCH display name",
    (await call("PATCH", `/v1/passports/${id}`, { display_name: "Renamed" }, 200)).counts,
  ]);
  rows.push([
    "state change",
    (await call("PATCH", `/v1/passports/${id}/state`, { environment: "staging" }, 200)).counts,
  ]);
  rows.push(["binding add", (await call("POST", `/v1/passports/${id}/bindings`, endpoint(), 200)).counts]);
  const evidence = { claim: "owner", source: "Bench", scope: "all", observed_at: new Date().toISOString() };
  rows.push(["evidence add", (await call("POST", `/v1/passports/${id}/evidence`, evidence, 200)).counts]);
  for (const [path, name] of [
    [`/v1/passports?organisation_id=${ORGANISATION}&limit=50`, "list page"],
    [`/v1/passports?organisation_id=${ORGANISATION}&q=api&limit=50`, "search page"],
  ]) {
    await reset();
    const response = await fetch(`${api}${path}`, { headers: authorization });
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}`);
    await response.arrayBuffer();
    rows.push([name, await (await fetch(`${api}/__bench/counts`)).json()]);
  }
  return rows;
}

/**
 * A create must really publish before anything is measured: answered `published`, its snapshot in
 * KV with the log index in the metadata (without the log bound, publication fails and the writes
 * would look cheap).
 */
async function assertPublishes(api, authorization, snapshots) {
  const response = await fetch(`${api}/v1/passports`, {
    method: "POST",
    headers: { ...authorization, "content-type": "application/json" },
    body: JSON.stringify({ family: "api", organisation_id: ORGANISATION, display_name: "Publication check" }),
  });
  const answer = await response.json();
  if (response.status !== 201 || answer.publication?.status !== "published") {
    throw new Error(`create did not publish: ${response.status} ${JSON.stringify(answer).slice(0, 300)}`);
  }
  const { value, metadata } = await snapshots.getWithMetadata(snapshotKey(answer.identity_id));
  if (!value || !Number.isSafeInteger(metadata?.log_index)) {
    throw new Error(`create published no snapshot with a log index: ${JSON.stringify(metadata)}`);
  }
  return metadata.log_index;
}

/**
 * The log object's own KV writes per create under load: its passes run in the background and are
 * shared by the appends of a quarter second (docs/transparency-log.md), so they are counted over a
 * run of creates, not per request.
 */
async function logWritesPerCreate(api, headers, { seconds, connections }) {
  const written = async () => (await (await fetch(`${api}/__bench/log-writes`)).json()).writes;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1000));
  // Passes still waiting from earlier requests finish first, and the last of this run after it.
  await settle();
  const before = await written();
  const run = load({
    urls: [`${api}/v1/passports`],
    headers,
    body: JSON.stringify({ family: "api", organisation_id: ORGANISATION, display_name: "Log writes" }),
    seconds,
    connections,
  });
  await settle();
  const creates = run.statuses[201] ?? 0;
  if (creates === 0)
    throw new Error(`no create succeeded while counting the log's writes: ${JSON.stringify(run.statuses)}`);
  return { creates, perCreate: ((await written()) - before) / creates };
}

const listCursor = (row) => base64url.encode(JSON.stringify([row.at, row.id]));

/**
 * Runs `measure` with the control plane's storage counters off (POST /__bench/counting), so a
 * measured route pays for no counting its floor does not make, and turns them on again after.
 */
async function uncounted(api, measure) {
  // After a long load run the keep-alive socket can be stale: `once` sends the switch again.
  const counting = (on) => once(() => fetch(`${api}/__bench/counting`, { method: "POST", body: on ? "on" : "off" }));
  await counting(false);
  try {
    return await measure();
  } finally {
    await counting(true);
  }
}

/** The list paths, by the `kind` their pairs carry (and BENCH_PROFILE takes). */
const LIST_KINDS = ["list", "filtered", "deep", "search"];

/**
 * BENCH_PROFILE: runs one path's subject under load (after its warm-up) while the control plane's
 * isolate is profiled, writes .bench/control-<path>.cpuprofile and prints the summary.
 */
async function profilePath(root, server, pair, options, log) {
  const run = (seconds) => load({ ...pair.subject, seconds, connections: options.connections });
  run(options.warmup);
  const file = join(root, ".bench", `control-${PROFILE}.cpuprofile`);
  let measured;
  const summary = await profileWhile({
    inspectorPort: server.inspectorPort,
    worker: "control",
    file,
    during: () => {
      measured = run(options.seconds * 2);
    },
  });
  log(`profiled ${pair.name}: ${measured.rps.toFixed(0)} req/s, statuses ${JSON.stringify(measured.statuses)}`);
  log(`profile written to .bench/control-${PROFILE}.cpuprofile`);
  for (const line of summary) console.log(line);
}

/** The list, deep-page and search pairs at the current size. */
function listPairs(api, pageFloor, authorization, size) {
  const list = `${api}/v1/passports?organisation_id=${ORGANISATION}&limit=50`;
  const middle = seeded[Math.floor(size / 2)];
  const get = (url) => ({ urls: [url], headers: authorization, status: 200 });
  const floor = (query = "") => ({ name: "D1 page of 50", urls: [`${pageFloor}/${query}`], status: 200 });
  return [
    {
      kind: "list",
      size,
      name: `list first page (${size})`,
      subject: get(list),
      baseline: floor(),
      target: TARGETS.list,
    },
    {
      kind: "filtered",
      size,
      name: `list filtered by environment (${size})`,
      subject: get(`${list}&environment=staging`),
      baseline: { ...floor("?environment=staging"), name: "D1 filtered page of 50" },
      target: TARGETS.list,
    },
    {
      kind: "deep",
      size,
      name: `list page at the middle, by cursor (${size})`,
      subject: get(`${list}&cursor=${listCursor(middle)}`),
      baseline: { ...floor(`?after=${middle.at},${middle.id}`), name: "D1 page of 50 after a row" },
      target: TARGETS.list,
    },
    {
      kind: "search",
      size,
      name: `search q=api, first page (${size})`,
      subject: get(`${list}&q=api`),
      baseline: { ...floor("?q=api"), name: "D1 FTS5 page of 50" },
      target: TARGETS.list,
    },
  ];
}

/** Whether each list path at the largest size stays within 10% (TARGETS.flat) of its ratio at every smaller size. */
function flatness(results) {
  const checks = [];
  for (const kind of ["list", "filtered", "deep", "search"]) {
    const rows = results.filter((r) => r.kind === kind).sort((a, b) => a.size - b.size);
    const largest = rows.at(-1);
    if (!largest) continue;
    for (const smaller of rows.slice(0, -1)) {
      const ratio = largest.ratios.rps.median / smaller.ratios.rps.median;
      checks.push({
        name: `${kind}: req/s ratio to floor at ${largest.size} vs ${smaller.size}`,
        value: ratio,
        target: TARGETS.flat,
        ok: ratio >= TARGETS.flat,
        detail: `${largest.ratios.rps.median.toFixed(2)} vs ${smaller.ratios.rps.median.toFixed(2)}; p50 ${largest.subject.p50.median.toFixed(2)} ms vs ${smaller.subject.p50.median.toFixed(2)} ms`,
      });
    }
  }
  return checks;
}

/** The D1 round trips each counted write made before it answered (all of them: it answers once published). */
function roundTrips(counts) {
  return counts
    .filter(([route]) => COUNTED_WRITES.includes(route))
    .map(([route, c]) => ({
      name: `${route}: D1 round trips before the answer`,
      value: c.d1_round_trips,
      digits: 0,
      at_most: true,
      target: TARGETS.writeRoundTrips,
      ok: c.d1_round_trips <= TARGETS.writeRoundTrips,
      detail: `${c.d1_statements} statements, ${c.kv_operations} KV operations, ${c.sequencer_calls + c.log_calls + c.purge_calls} Durable Object calls`,
    }));
}

export async function run({ root, options, log }) {
  log("bundling the control plane and the resolver with wrangler deploy --dry-run");
  const control = bundle(root, { config: "workers/control/wrangler.toml", outdir: join(root, ".bench", "control") });
  const resolver = bundle(root, { config: "wrangler.toml", outdir: join(root, ".bench", "resolver") });
  const auth = await signingKeyPair("ES256", "bench");
  const signing = await signingKeyPair("ES256", "bench-signing");
  const logKeys = await logKeyPair(LOG_ORIGIN);
  const baselineD1 = { DB: { type: "d1", id: "baseline-db" } };
  const server = await serve(
    {
      control: {
        modulePath: join(root, "scripts/bench/workers/counting-control.js"),
        modules: { "control.js": control.path },
        exports: {
          PublicationSequencer: { type: "durable-object", storage: "sqlite" },
          TransparencyLog: { type: "durable-object", storage: "sqlite" },
          PurgeBudget: { type: "durable-object", storage: "sqlite" },
        },
        kv: "SNAPSHOTS",
        vars: { ...controlVars({ auth, signing, logKeys }), D1_SHARDS: JSON.stringify(SHARDS) },
        bindings: {
          ...Object.fromEntries(SHARDS.map((name) => [name, { type: "d1", id: `control-${name.toLowerCase()}` }])),
          DIRECTORY: { type: "d1", id: "control-directory" },
          // Each publication announces itself here (docs/events.md); no consumer runs in the bench.
          NOTIFICATIONS: { type: "queue", name: "passport-notifications" },
          RESOLVER: { type: "worker", worker: "resolver", exportName: "ResolverAdmin" },
          PUBLICATION_SEQUENCER: { type: "durable-object", worker: "control", exportName: "PublicationSequencer" },
          TRANSPARENCY_LOG: { type: "durable-object", worker: "control", exportName: "TransparencyLog" },
          PURGE_BUDGET: { type: "durable-object", worker: "control", exportName: "PurgeBudget" },
          ...Object.fromEntries(
            Object.entries(LIMITS).map(([name, namespace]) => [
              name,
              { type: "rate-limit", namespace, simple: { limit: 1_000_000_000, period: 60 } },
            ]),
          ),
        },
      },
      resolver: { modulePath: resolver.path, kv: "SNAPSHOTS", vars: { PUBLIC_BASE_URL: "http://127.0.0.1" } },
      writeCalls: {
        modulePath: join(root, "scripts/bench/baselines/write-calls.js"),
        kv: "KV",
        exports: {
          Sequencer: { type: "durable-object", storage: "sqlite" },
          Log: { type: "durable-object", storage: "sqlite" },
          PurgeBudget: { type: "durable-object", storage: "sqlite" },
        },
        bindings: {
          ...baselineD1,
          SEQUENCER: { type: "durable-object", worker: "writeCalls", exportName: "Sequencer" },
          LOG: { type: "durable-object", worker: "writeCalls", exportName: "Log" },
          PURGE_BUDGET: { type: "durable-object", worker: "writeCalls", exportName: "PurgeBudget" },
        },
      },
      pageFloor: { modulePath: join(root, "scripts/bench/baselines/d1-page.js"), bindings: baselineD1 },
    },
    {
      compatibilityDate: compatibilityDate(root),
      compatibilityFlags: ["nodejs_compat"],
      inspectorPort: PROFILE ? await freePort() : undefined,
    },
  );
  try {
    const shardDbs = await Promise.all(SHARDS.map((name) => server.d1("control", name)));
    const directoryDb = await server.d1("control", "DIRECTORY");
    const controlDb = shardDbs[BENCH_SHARD];
    const baselineDb = await server.d1("pageFloor", "DB");
    log(`applying the D1 migrations to ${SHARDS.length} shards, the directory and the baseline`);
    for (const db of [...shardDbs, baselineDb]) await applyMigrations(db, root);
    await applyMigrations(directoryDb, root, "migrations/directory");
    await prepare(controlDb, baselineDb);
    await placeOrganisations(shardDbs, directoryDb);
    log(
      `the bench organisation in shard ${BENCH_SHARD}, a neighbour with ${NEIGHBOUR.passports} passports in the other`,
    );
    // No org/role claims: the membership is already in D1, so no request writes it again.
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "bench" })
      .setIssuer(DEVELOPMENT_ISSUER)
      .setAudience("passport-dashboard")
      .setSubject(SUBJECT)
      .setExpirationTime("2h")
      .sign(await importJWK(JSON.parse(auth.privateJwk), "ES256"));
    const authorization = { authorization: `Bearer ${token}` };
    const { control: api, writeCalls, pageFloor } = server.urls;
    const logIndex = await assertPublishes(api, authorization, await server.kv("control"));
    log(`a create publishes: snapshot in KV at log index ${logIndex}`);

    const results = [];
    for (const size of SIZES) {
      const started = Date.now();
      await seedTo({ controlDb, baselineDb, directoryDb }, size);
      log(`seeded ${size} passports (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      if (LIST_KINDS.includes(PROFILE)) {
        const pair = listPairs(api, pageFloor, authorization, size).find((p) => p.kind === PROFILE);
        await uncounted(api, () => profilePath(root, server, pair, options, log));
        return { results: [], notes: [] };
      }
      if (!PARTS.has("lists")) continue;
      const pairs = listPairs(api, pageFloor, authorization, size);
      const measured = await uncounted(api, () => comparePairs(pairs, { ...options, log, cpu: server.cpu }));
      results.push(...measured);
      for (const r of measured)
        log(`${r.name}: ${r.subject.rps.median.toFixed(0)} req/s, ratio ${r.ratios.rps.median.toFixed(2)}`);
    }

    const counts = await countWrites(api, authorization);
    // The changes and their references take the same pooled passports in turn (each in its own database).
    for (const url of [`${api}/__bench/pool`, `${writeCalls}/__pool`]) {
      await fetch(url, { method: "POST", body: JSON.stringify(seeded.slice(0, POOL).map((r) => r.id)) });
    }
    const json = { ...authorization, "content-type": "application/json" };
    const logWrites = PARTS.has("writes") ? await logWritesPerCreate(api, json, options) : undefined;
    if (logWrites) log(`log KV writes: ${logWrites.perCreate.toFixed(2)} per create over ${logWrites.creates} creates`);
    const size = seeded.length;
    const write = (key, name, method, path, body, status, route) => ({
      key,
      name: `${name} (${size})`,
      subject: {
        urls: [method === "POST" && !path.includes("{id}") ? `${api}${path}` : `${api}/__bench/each/${method}${path}`],
        headers: json,
        body: JSON.stringify(body),
        status,
      },
      baseline: { name: `its D1, KV and DO calls (${route})`, urls: [`${writeCalls}/${route}`], body: "{}", status },
      kind: "write",
      size,
      target: TARGETS.write,
      p99Target: TARGETS.writeP99,
    });
    const writes = [
      write(
        "create",
        "create and publish (POST /v1/passports)",
        "POST",
        "/v1/passports",
        { family: "api", organisation_id: ORGANISATION, display_name: "Bench API" },
        201,
        "create",
      ),
      // Changes take the pooled passports in turn (`/__bench/each/`), so concurrent requests never
      // race on one passport; the reference takes as many rows in turn.
      write(
        "patch",
        "PATCH display name and publish",
        "PATCH",
        "/v1/passports/{id}",
        { display_name: "Renamed" },
        200,
        "update",
      ),
      write(
        "state",
        "state change and publish",
        "PATCH",
        "/v1/passports/{id}/state",
        { availability: "degraded" },
        200,
        "state",
      ),
      // `{n}` is a new number per request (the wrapper), so every binding is new.
      write(
        "binding",
        "binding add and publish",
        "POST",
        "/v1/passports/{id}/bindings",
        { class: "endpoint", value: "https://add-{n}.bench.example/" },
        200,
        "binding",
      ),
      // No target: what the Durable Object calls a publication makes (the sequencer object, the
      // log append, the hand-off to the purge keeper) cost by themselves, against the same D1 and
      // KV calls without them (scripts/bench/baselines/write-calls.js).
      ...["create", "update"].map((route) => ({
        key: `platform-${route}`,
        kind: "write",
        size,
        name: `${route}: its D1, KV and DO calls (${size})`,
        subject: { urls: [`${writeCalls}/${route}`], body: "{}", status: route === "create" ? 201 : 200 },
        baseline: {
          name: `its D1 and KV calls alone (${route})`,
          urls: [`${writeCalls}/${route}?storage`],
          body: "{}",
          status: route === "create" ? 201 : 200,
        },
      })),
    ];
    const item = { create: { family: "api", organisation_id: ORGANISATION, display_name: "Bench batch" } };
    writes.push({
      name: `batch of ${BATCH} creates (POST /v1/passports/batch, ${size})`,
      subject: {
        urls: [`${api}/v1/passports/batch`],
        headers: json,
        body: JSON.stringify({ items: Array(BATCH).fill(item) }),
        status: 200,
      },
      baseline: { ...writes[0].subject, name: "single create and publish" },
      key: "batch",
      kind: "write",
      size,
      // One batch takes about as long as ten creates: longer runs and two connections (both sides),
      // so each run completes enough of them.
      warmup: 6,
      connections: 2,
      seconds: 6,
    });
    if (PROFILE) {
      const pair = writes.find((w) => w.key === PROFILE);
      if (!pair) {
        const paths = [...writes.map((w) => w.key), ...LIST_KINDS];
        throw new Error(`BENCH_PROFILE=${PROFILE}: no such path; paths: ${paths.join(", ")}`);
      }
      await uncounted(api, () => profilePath(root, server, pair, options, log));
      return { results: [], notes: [] };
    }
    if (WRITES) writes.splice(0, writes.length, ...writes.filter((w) => WRITES.includes(w.key)));
    const measuredWrites = PARTS.has("writes")
      ? await uncounted(api, () => comparePairs(writes, { ...options, log, cpu: server.cpu }))
      : [];
    for (const r of measuredWrites)
      log(`${r.name}: ${r.subject.rps.median.toFixed(0)} req/s, ratio ${r.ratios.rps.median.toFixed(2)}`);
    results.push(...measuredWrites);
    const notes = [];
    const byKey = new Map(measuredWrites.map((r, i) => [writes[i].key, r]));
    if (logWrites) {
      notes.push(
        `the log's background passes wrote ${logWrites.perCreate.toFixed(2)} KV values per create (tiles, bundles, hints, checkpoint; ${logWrites.creates} creates in ${options.seconds} s)`,
      );
    }
    for (const [route, key] of [
      ["create", "create"],
      ["update", "patch"],
    ]) {
      const platform = byKey.get(`platform-${route}`);
      const measured = byKey.get(key);
      if (!platform || !measured) continue;
      notes.push(
        `${route}: its D1, KV and Durable Object calls reach ${platform.ratios.rps.median.toFixed(2)} of its D1 and KV calls alone; the route reaches ${measured.ratios.rps.median.toFixed(2)} of all its calls, so ${(measured.ratios.rps.median * platform.ratios.rps.median).toFixed(2)} of its D1 and KV calls alone`,
      );
    }
    const batched = byKey.get("batch");
    if (batched) {
      notes.push(
        `batch of ${BATCH}: ${(batched.ratios.rps.median * BATCH).toFixed(2)} times the passports created per second of single creates (${(batched.subject.rps.median * BATCH).toFixed(0)}/s against ${batched.reference.rps.median.toFixed(0)}/s)`,
      );
    }
    return { results, counts, checks: [...flatness(results), ...roundTrips(counts)], notes };
  } finally {
    await server.close();
  }
}
