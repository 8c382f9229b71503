// Paired comparison of each path with its own baseline: warm both up, then alternate the order in
// every round (A B, B A, ...) and report the per-round ratios, so drift between rounds cancels out.
import { readdirSync, readFileSync } from "node:fs";
import { load } from "./h2load.mjs";

/**
 * CPU time (ms, user + system) the workerd processes started by this process have used so far, or
 * undefined where /proc is missing. Per request it is a figure that other work on the machine
 * barely moves, unlike req/s: on a shared machine it shows what each side costs.
 */
function workerdCpuMs() {
  let pids;
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const parents = new Map();
  const stats = new Map();
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parents.set(pid, fields[1]);
      stats.set(pid, { name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), fields });
    } catch {}
  }
  const ours = (pid) => {
    for (let at = parents.get(pid); at && at !== "0"; at = parents.get(at)) if (at === String(process.pid)) return true;
    return false;
  };
  let ticks = 0;
  for (const [pid, { name, fields }] of stats) {
    if (name === "workerd" && ours(pid)) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function spread(values) {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

function checkStatuses(label, result, expected) {
  const unexpected = Object.keys(result.statuses).filter((status) => Number(status) !== expected);
  if (result.errors > 0 || unexpected.length > 0 || result.requests === 0) {
    throw new Error(
      `${label}: expected only ${expected}, got ${JSON.stringify(result.statuses)} with ${result.errors} errors`,
    );
  }
}

/**
 * `pairs`: [{ name, subject: { urls, headers?, body?, status }, baseline: { name, urls, headers?, body?, status } }].
 * Returns, per pair, the raw runs and the spread of the subject/baseline ratios.
 */
export function comparePairs(pairs, { rounds, seconds, warmup, connections, log }) {
  const run = (side, duration, pair) => {
    const before = workerdCpuMs();
    const result = load({
      urls: side.urls,
      headers: side.headers,
      body: side.body,
      seconds: duration,
      connections: pair.connections ?? connections,
    });
    const after = workerdCpuMs();
    return { ...result, cpu: before === undefined ? Number.NaN : (after - before) / Math.max(1, result.requests) };
  };
  // A pair whose requests take long (a batch) may ask for longer runs and fewer connections:
  // `seconds`, `warmup` and `connections`.
  for (const pair of pairs) {
    log(`warming up ${pair.name} and ${pair.baseline.name}`);
    checkStatuses(pair.name, run(pair.subject, pair.warmup ?? warmup, pair), pair.subject.status);
    checkStatuses(pair.baseline.name, run(pair.baseline, pair.warmup ?? warmup, pair), pair.baseline.status);
  }
  const runs = pairs.map(() => ({ subject: [], baseline: [] }));
  for (let round = 0; round < rounds; round++) {
    log(`round ${round + 1} of ${rounds}`);
    pairs.forEach((pair, i) => {
      const order = (round + i) % 2 === 0 ? ["subject", "baseline"] : ["baseline", "subject"];
      for (const side of order) {
        const result = run(pair[side], pair.seconds ?? seconds, pair);
        checkStatuses(side === "subject" ? pair.name : pair.baseline.name, result, pair[side].status);
        runs[i][side].push(result);
      }
    });
  }
  return pairs.map((pair, i) => {
    const { subject, baseline } = runs[i];
    const ratio = (key) => spread(subject.map((s, r) => s[key] / baseline[r][key]));
    return {
      name: pair.name,
      baseline: pair.baseline.name,
      subject: {
        rps: spread(subject.map((s) => s.rps)),
        p50: spread(subject.map((s) => s.p50)),
        p99: spread(subject.map((s) => s.p99)),
      },
      reference: {
        rps: spread(baseline.map((s) => s.rps)),
        p50: spread(baseline.map((s) => s.p50)),
        p99: spread(baseline.map((s) => s.p99)),
      },
      // cpu: workerd's CPU ms per request; its ratio is the reference's over the path's (higher is better, like req/s).
      cpu: { subject: spread(subject.map((s) => s.cpu)), reference: spread(baseline.map((s) => s.cpu)) },
      ratios: {
        rps: ratio("rps"),
        p50: ratio("p50"),
        p99: ratio("p99"),
        cpu: spread(subject.map((s, r) => baseline[r].cpu / s.cpu)),
      },
    };
  });
}
