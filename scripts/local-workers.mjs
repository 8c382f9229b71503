// The three Workers of the local service (resolver, control plane, marketplace simulator) in ONE
// workerd process, each on its own port. One process means one owner of the SQLite files under
// the persist directory: no two runtimes ever open the same database (docs/local-development.md).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, extname, join } from "node:path";
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from "miniflare";
import { startEdgeProxy } from "./edge-proxy.mjs";

/** Runs the project's wrangler with Node directly (no package manager in between); resolves to its output. */
export function runWrangler(root, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "node_modules", "wrangler", "bin", "wrangler.js"), ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CI: "true", WRANGLER_LOG: "error", WRANGLER_SEND_METRICS: "false" },
    });
    let output = "";
    for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`wrangler ${args.slice(0, 2).join(" ")} failed:\n${output}`)),
    );
  });
}

/**
 * Bundles a Worker as `wrangler deploy` would (without deploying); resolves to the output directory.
 * `worker.main`, when given, is the entry instead of the config's `main` (the platform model's).
 */
async function bundle(root, worker, outdir) {
  const args = ["deploy", ...(worker.main ? [worker.main] : []), "--dry-run", "-c", worker.config, "--outdir", outdir];
  await runWrangler(root, worker.env ? [...args, "--env", worker.env] : args);
  return outdir;
}

/**
 * Starts the Workers and resolves once every port answers. The runtime opens the persist directory
 * only after `beforeStart` (e.g. the migrations) has settled; bundling runs meanwhile. Each worker is
 * `{ config, env?, port?, vars, services?, main? }`: its wrangler config (bindings, queues, assets
 * come from there), the port it is served on at 127.0.0.1 (none: reached only through bindings),
 * vars that override the config's, service bindings the config does not have (local-only seams),
 * and optionally `main`, an entry that replaces the config's. The runtime listens
 * on a port of its own choosing; the public port is an edge proxy (scripts/edge-proxy.mjs), which
 * sets `cf-connecting-ip` from the connecting socket as Cloudflare's edge does.
 */
export async function startLocalWorkers({ root, persistTo, workers, beforeStart, onOutput }) {
  const buildDir = mkdtempSync(join(tmpdir(), "passport-dev-build-"));
  // wrangler's API takes seconds to load; it loads while the Workers are bundled.
  const wrangler = import("wrangler");
  let mf;
  const proxies = [];
  try {
    const outdirs = await Promise.all(workers.map((worker, i) => bundle(root, worker, join(buildDir, String(i)))));
    await beforeStart;
    const { unstable_getMiniflareWorkerOptions: workerOptionsFromConfig } = await wrangler;
    const options = workers.map((worker, i) => {
      // modulesRules only matter for unbundled sources; the bundle needs none (and v5 options have none).
      const { modulesRules, ...workerOptions } = workerOptionsFromConfig(
        join(root, worker.config),
        worker.env,
      ).workerOptions;
      return {
        ...workerOptions,
        name: worker.name,
        // Module names are paths relative to rootPath, so the bundle's own directory is the root.
        rootPath: outdirs[i],
        modules: true,
        // wrangler names the bundle after its entry: index.js for the configs' src/index.ts.
        scriptPath: join(outdirs[i], worker.main ? `${basename(worker.main, extname(worker.main))}.js` : "index.js"),
        bindings: { ...workerOptions.bindings, ...worker.vars },
        serviceBindings: { ...workerOptions.serviceBindings, ...worker.services },
        unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
      };
    });
    mf = new Miniflare(
      convertV4MiniflareOptions({
        // The entry socket is unused (each Worker has its own port above); a free port keeps it out of the way.
        host: "127.0.0.1",
        port: 0,
        // A fixed request.cf instead of downloading one from the internet.
        cf: false,
        // Same layout as `wrangler dev --persist-to` and `wrangler d1 ... --local --persist-to`.
        resourcePersistencePath: join(persistTo, "v3"),
        log: new Log(LogLevel.WARN),
        logRequests: false,
        handleStructuredLogs: ({ level, message }) => onOutput?.(`${level}: ${message}`),
        workers: options,
      }),
    );
    await mf.ready;
    for (const worker of workers.filter((w) => w.port !== undefined)) {
      const upstream = await mf.unsafeGetDirectURL(worker.name);
      proxies.push(await startEdgeProxy({ host: "127.0.0.1", port: worker.port, upstream }));
    }
    const stop = async () => {
      await Promise.all(proxies.map((close) => close()));
      await mf.dispose();
    };
    return { mf, stop };
  } catch (error) {
    await Promise.all(proxies.map((close) => close()));
    await mf?.dispose().catch(() => {});
    throw error;
  } finally {
    // The runtime has the modules once it is up, so the bundles need not outlive the start.
    rmSync(buildDir, { recursive: true, force: true });
  }
}
