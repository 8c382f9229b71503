// The control plane bundle (./control.js) behind counters: every D1 round trip and statement and
// every KV operation its fetch handler and its publication sequencer make is counted, and every
// Durable Object call: the fetch handler's call to the passport's sequencer, the sequencer's append
// to the transparency log and its hand-off to the purge keeper, so the bench can print what each
// route costs in platform calls. GET /__bench/counts answers the counts since the previous call and
// resets them. The log's own KV writes (tiles, bundles, hints, checkpoint) run in background passes
// after it answers, shared by the appends of a quarter second, so they belong to no one request:
// GET /__bench/log-writes answers how many there were since start. While the bench measures req/s,
// POST /__bench/counting with the body `off` turns the counters off (`on` turns them on again): a
// request then reaches the control plane with its own bindings and no URL parsed before it, and the
// publication sequencer's D1 statements (its bindings are wrapped once, when it is made) are D1's
// own, so the measured route pays nothing its floor does not.
//
// POST /__bench/pool takes a JSON array of identity ids; then POST /__bench/each/{METHOD}{path}
// forwards the request as METHOD to `path` with `{id}` replaced by the next id of the pool in turn,
// so concurrent connections change different passports (one passport changed by two connections at
// once would answer 412 to one of them, as it should), and `{n}` in its body replaced by a number
// new to each request (a binding value no passport has yet).
import control, { TransparencyLog as Log, PurgeBudget, PublicationSequencer as Sequencer } from "./control.js";

export { PurgeBudget };

let counts = fresh();
/** Whether requests pass through uncounted (POST /__bench/counting with `off`). */
let plain = false;
/** KV writes of the log object's background passes since start: GET /__bench/log-writes. */
let logKvWrites = 0;

function fresh() {
  return {
    d1_round_trips: 0,
    d1_statements: 0,
    d1_rows_read: 0,
    d1_rows_written: 0,
    kv_operations: 0,
    sequencer_calls: 0,
    log_calls: 0,
    purge_calls: 0,
  };
}

function countedD1(db) {
  const real = new WeakMap();
  const wrap = (statement) => {
    const counted = {
      bind: (...values) => wrap(statement.bind(...values)),
      first: (column) => tick(() => statement.first(column)),
      all: () => tick(() => statement.all().then(metered)),
      run: () => tick(() => statement.run().then(metered)),
      raw: (options) => tick(() => statement.raw(options)),
    };
    real.set(counted, statement);
    return counted;
  };
  const tick = (call) => {
    counts.d1_round_trips++;
    counts.d1_statements++;
    return call();
  };
  return {
    // While the counters are off (`plain`), statements are D1's own and a batch is passed through.
    prepare: (query) => (plain ? db.prepare(query) : wrap(db.prepare(query))),
    batch: async (statements) => {
      const results = await db.batch(statements.map((s) => real.get(s) ?? s));
      if (plain) return results;
      counts.d1_round_trips++;
      counts.d1_statements += statements.length;
      for (const result of results) metered(result);
      return results;
    },
    exec: (query) => {
      counts.d1_round_trips++;
      counts.d1_statements++;
      return db.exec(query);
    },
    withSession: (...args) => db.withSession(...args),
    dump: () => db.dump(),
  };
}

/** Adds a D1 result's rows read and written (what D1 bills, indexes and triggers included) to the counts. */
function metered(result) {
  counts.d1_rows_read += result?.meta?.rows_read ?? 0;
  counts.d1_rows_written += result?.meta?.rows_written ?? 0;
  return result;
}

/** `kv` with each operation passed to `count` (its name) before it runs. */
function countedKv(kv, count = () => counts.kv_operations++) {
  const op =
    (name) =>
    (...args) => {
      count(name);
      return kv[name](...args);
    };
  return {
    get: op("get"),
    getWithMetadata: op("getWithMetadata"),
    put: op("put"),
    delete: op("delete"),
    list: op("list"),
  };
}

/**
 * A Durable Object namespace whose stubs count each RPC call in `counts[counter]` (the sequencer,
 * the log, the purge keeper). A stub is never awaited, so `then` stays undefined.
 */
function countedObjects(namespace, counter) {
  return {
    getByName: (name) => {
      const stub = namespace.getByName(name);
      return new Proxy(
        {},
        {
          get: (_, method) =>
            method === "then"
              ? undefined
              : (...args) => {
                  counts[counter]++;
                  return stub[method](...args);
                },
        },
      );
    },
  };
}

/** The control plane's D1 bindings: the shards D1_SHARDS lists, and the directory when bound. */
function d1BindingNames(env) {
  return [...new Set([...JSON.parse(env.D1_SHARDS || '["DB"]'), "DB", ...(env.DIRECTORY ? ["DIRECTORY"] : [])])];
}

// One counted env per env object, so the wrapper costs a request no allocations of its own.
const countedEnvs = new WeakMap();

function counted(env) {
  let wrapped = countedEnvs.get(env);
  if (!wrapped) {
    wrapped = {
      ...env,
      // Every shard and the directory (docs/sharding.md), so a routed request's round trips all count.
      ...Object.fromEntries(d1BindingNames(env).map((name) => [name, countedD1(env[name])])),
      SNAPSHOTS: countedKv(env.SNAPSHOTS),
      PUBLICATION_SEQUENCER: countedObjects(env.PUBLICATION_SEQUENCER, "sequencer_calls"),
      TRANSPARENCY_LOG: countedObjects(env.TRANSPARENCY_LOG, "log_calls"),
      PURGE_BUDGET: countedObjects(env.PURGE_BUDGET, "purge_calls"),
    };
    countedEnvs.set(env, wrapped);
  }
  return wrapped;
}

/** The log object with its KV writes (tiles, bundles, hints, checkpoint) counted. */
export class TransparencyLog extends Log {
  constructor(ctx, env) {
    const countWrite = (name) => {
      if (name === "put") logKvWrites++;
    };
    super(ctx, { ...env, SNAPSHOTS: countedKv(env.SNAPSHOTS, countWrite) });
  }
}

export class PublicationSequencer extends Sequencer {
  constructor(ctx, env) {
    super(ctx, counted(env));
  }
}

let pool = [];
let next = 0;
/** The last number given to a `{n}` in a forwarded body. */
let numbered = 0;

export default {
  async fetch(request, env, ctx) {
    if (plain && !request.url.includes("/__bench/")) return control.fetch(request, env, ctx);
    const url = new URL(request.url);
    if (url.pathname === "/__bench/counting") {
      plain = (await request.text()) === "off";
      return new Response(null, { status: 204 });
    }
    if (url.pathname === "/__bench/log-writes") return Response.json({ writes: logKvWrites });
    if (url.pathname === "/__bench/counts") {
      const answer = Response.json(counts);
      counts = fresh();
      return answer;
    }
    if (url.pathname === "/__bench/pool") {
      pool = await request.json();
      return new Response(null, { status: 204 });
    }
    const each = /^\/__bench\/each\/([A-Z]+)(\/.*)$/.exec(url.pathname);
    if (each) {
      const id = pool[next++ % pool.length];
      const target = new URL(each[2].replace(/\{id\}|%7Bid%7D/, id) + url.search, url);
      const body = (await request.text()).replace("{n}", String(++numbered));
      const forwarded = new Request(target, { method: each[1], headers: request.headers, body });
      return control.fetch(forwarded, plain ? env : counted(env), ctx);
    }
    return control.fetch(request, counted(env), ctx);
  },
};
