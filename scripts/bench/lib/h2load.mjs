// Runs h2load (Debian package nghttp2-client) and turns its per-request log into req/s, p50, p99.
// h2load's log holds every request's exact latency; wrk's percentiles are wrong on these machines.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const INSTALL_HINT =
  "h2load is not installed. It is in Debian's nghttp2-client package:\n" +
  "  apt-get update && apt-get install -y nghttp2-client\n" +
  "(on macOS: brew install nghttp2)";

/** Throws with install instructions when h2load is missing. */
export function ensureH2load() {
  const probe = spawnSync("h2load", ["--version"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) throw new Error(INSTALL_HINT);
  return probe.stdout.trim();
}

function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * One timed load run over HTTP/1.1 with one load thread (it shares two cores with workerd).
 * `urls` are used round-robin; a `body` makes every request a POST of that body. Returns req/s,
 * latency percentiles in ms, and status counts.
 */
export function load({ urls, seconds, connections, headers = {}, body }) {
  const dir = mkdtempSync(join(tmpdir(), "h2load-"));
  try {
    const logFile = join(dir, "requests.log");
    const args = ["--h1", "-t1", `-c${connections}`, "-m1", `-D${seconds}`, `--log-file=${logFile}`];
    for (const [name, value] of Object.entries(headers)) args.push("-H", `${name}: ${value}`);
    if (body !== undefined) {
      const bodyFile = join(dir, "body");
      writeFileSync(bodyFile, body);
      args.push("-d", bodyFile);
    }
    if (urls.length === 1) args.push(urls[0]);
    else {
      const input = join(dir, "urls.txt");
      writeFileSync(input, `${urls.join("\n")}\n`);
      args.push("-i", input);
    }
    const run = spawnSync("h2load", args, { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
    if (run.status !== 0) throw new Error(`h2load failed (${run.status}):\n${run.stderr}\n${run.stdout}`);
    const latencies = [];
    const statuses = {};
    for (const line of readFileSync(logFile, "utf8").split("\n")) {
      if (!line) continue;
      const [, status, duration] = line.split("\t").map(Number);
      latencies.push(duration / 1000);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
    latencies.sort((a, b) => a - b);
    const rate = /finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(run.stdout);
    // h2load counts a 4xx as "failed"; only transport errors and timeouts are failures here.
    const broken = /(\d+) errored, (\d+) timeout/.exec(run.stdout);
    if (!rate || !broken) throw new Error(`unexpected h2load output:\n${run.stdout}`);
    return {
      requests: latencies.length,
      rps: Number(rate[1]),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      statuses,
      errors: Number(broken[1]) + Number(broken[2]),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
