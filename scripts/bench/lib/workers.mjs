// Builds Workers exactly as `wrangler deploy` would and serves them in workerd through Miniflare's
// direct sockets: the runtime calls each Worker's fetch itself, with no proxy Worker or Node hop in
// front (wrangler dev's proxy and logging cap throughput at a fraction of workerd's).
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { Miniflare } from "miniflare";

/** Bundles with `wrangler deploy --dry-run --outdir` and returns the entry module and its sizes. */
export function bundle(root, { config, outdir }) {
  const run = spawnSync("pnpm", ["exec", "wrangler", "deploy", "--dry-run", "--config", config, "--outdir", outdir], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, WRANGLER_LOG: "error", WRANGLER_SEND_METRICS: "false" },
  });
  if (run.status !== 0) throw new Error(`bundling ${config} failed:\n${run.stdout}\n${run.stderr}`);
  const path = join(outdir, "index.js");
  const code = readFileSync(path);
  return { path, raw: code.length, gzip: gzipSync(code).length };
}

/**
 * Starts one workerd with the given Workers, each on its own direct socket on 127.0.0.1, and
 * returns their base URLs. `workers`: name -> { modulePath, modules?, exports?, kv?: binding name, vars?, bindings? },
 * where `modules` are further modules the entry imports (name -> path), `exports` the Durable
 * Object classes a Worker defines, and `bindings` extra bindings in Miniflare's shape (D1, Durable
 * Object namespaces, rate limits, service bindings to the other Workers).
 */
export async function serve(workers, { compatibilityDate, compatibilityFlags = [] }) {
  const mf = new Miniflare({
    logRequests: false,
    workers: Object.entries(workers).map(([name, worker]) => ({
      config: {
        name,
        compatibilityDate,
        compatibilityFlags,
        manifest: {
          mainModule: "index.js",
          modules: Object.fromEntries(
            Object.entries({ "index.js": worker.modulePath, ...worker.modules }).map(([name, path]) => [
              name,
              { type: "esm", contents: readFileSync(path, "utf8") },
            ]),
          ),
        },
        ...(worker.exports ? { exports: worker.exports } : {}),
        env: {
          ...(worker.kv ? { [worker.kv]: { type: "kv", id: `${name}-kv` } } : {}),
          ...Object.fromEntries(Object.entries(worker.vars ?? {}).map(([k, v]) => [k, { type: "json", value: v }])),
          ...worker.bindings,
        },
        ...(worker.exports ? { exports: worker.exports } : {}),
      },
      dev: { unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }] },
    })),
  });
  const urls = {};
  for (const name of Object.keys(workers)) urls[name] = (await mf.unsafeGetDirectURL(name)).href.replace(/\/$/, "");
  const runtime = workerdProcesses();
  return {
    urls,
    /** CPU time (ms) the workerd process has used so far, or undefined where /proc cannot tell. */
    cpu: runtime.length > 0 ? () => cpuMs(runtime) : undefined,
    kv: (name) => mf.getKVNamespace(workers[name].kv, name),
    d1: (name, binding) => mf.getD1Database(binding, name),
    close: () => mf.dispose(),
  };
}

/** This process's workerd children (Linux /proc); none elsewhere. */
function workerdProcesses() {
  try {
    return readdirSync("/proc").filter((pid) => {
      if (!/^\d+$/.test(pid)) return false;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const parent = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1];
        return comm === "workerd" && parent === String(process.pid);
      } catch {
        return false;
      }
    });
  } catch {
    return [];
  }
}

/** User and system CPU time of the processes, in ms (clock ticks of 10 ms, as Linux reports them). */
function cpuMs(pids) {
  let ticks = 0;
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10;
}
