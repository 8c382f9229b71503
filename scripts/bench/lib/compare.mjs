// Paired comparison of each path with its own baseline: warm both up, then alternate the order in
// every round (A B, B A, ...) and report the per-round ratios, so drift between rounds cancels out.
import { load } from "./h2load.mjs";

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

/** A pair's own labels, carried to its result when set: its row's targets and how the report groups it. */
const LABELS = ["kind", "size", "target", "p99Target", "reportOnly"];

/**
 * `pairs`: [{ name, subject: { urls, headers?, body?, status, prime? }, baseline: { name, urls, headers?, body?, status, prime? },
 * kind?, size?, target?, p99Target?, reportOnly? }]. `target` (minimum req/s ratio) and `p99Target`
 * (maximum p99 ratio) are the row's own targets; `reportOnly` rows have none, not even the shared
 * one (a comparison kept for continuity); `kind` and `size` group rows; all are copied to the result.
 * `prime`: seconds of untimed load before each of that side's runs, for state the runtime drops
 * between runs (workerd evicts a Durable Object after about ten idle seconds, and the other runs
 * of a round take longer than that).
 * Returns, per pair, its labels, the spread of each side's figures and of the subject/baseline ratios.
 */
export function comparePairs(pairs, { rounds, seconds, warmup, connections, log, cpu }) {
  // With `cpu` (the server's CPU clock, ms), each run also gives the runtime's CPU time per request
  // (µs): on a machine shared with other work it varies far less than req/s.
  const run = (side, duration, pair) => {
    const before = cpu?.();
    const result = load({
      urls: side.urls,
      headers: side.headers,
      body: side.body,
      seconds: duration,
      connections: pair.connections ?? connections,
    });
    if (before !== undefined) result.cpu = ((cpu() - before) * 1000) / Math.max(1, result.requests);
    return result;
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
        // A side that asks for it is primed, untimed, before each run (see `prime` above).
        if (pair[side].prime) run(pair[side], pair[side].prime, pair);
        const result = run(pair[side], pair.seconds ?? seconds, pair);
        checkStatuses(side === "subject" ? pair.name : pair.baseline.name, result, pair[side].status);
        runs[i][side].push(result);
      }
    });
  }
  return pairs.map((pair, i) => {
    const { subject, baseline } = runs[i];
    const ratio = (key) => spread(subject.map((s, r) => s[key] / baseline[r][key]));
    // CPU per request as baseline/subject, so that, like req/s, 1 is the floor and higher is better.
    const cpuRatio = cpu ? { cpu: spread(subject.map((s, r) => baseline[r].cpu / s.cpu)) } : {};
    const cpuSide = (list) => (cpu ? { cpu: spread(list.map((s) => s.cpu)) } : {});
    const labels = Object.fromEntries(LABELS.filter((key) => pair[key] !== undefined).map((key) => [key, pair[key]]));
    return {
      name: pair.name,
      baseline: pair.baseline.name,
      ...labels,
      subject: {
        rps: spread(subject.map((s) => s.rps)),
        p50: spread(subject.map((s) => s.p50)),
        p99: spread(subject.map((s) => s.p99)),
        ...cpuSide(subject),
      },
      reference: {
        rps: spread(baseline.map((s) => s.rps)),
        p50: spread(baseline.map((s) => s.p50)),
        p99: spread(baseline.map((s) => s.p99)),
        ...cpuSide(baseline),
      },
      ratios: { rps: ratio("rps"), p50: ratio("p50"), p99: ratio("p99"), ...cpuRatio },
    };
  });
}
