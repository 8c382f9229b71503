// Prints a target's paired results as a table and says which targets were met.
const fixed = (n, digits = 2) => n.toFixed(digits);
const range = (s, digits = 2) => `${fixed(s.median, digits)} (${fixed(s.min, digits)}..${fixed(s.max, digits)})`;

function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  return rows.map((row) => row.map((cell, c) => cell.padEnd(widths[c])).join("  ")).join("\n");
}

/** Returns true when any target was missed. */
export function printReport(name, { results, bundle, targets, counts, checks, notes }, options) {
  let missed = false;
  if (counts) {
    console.log(`\n${name}: storage calls per request`);
    const rows = [
      [
        "route",
        "D1 round trips",
        "D1 statements",
        "D1 rows read",
        "D1 rows written",
        "KV operations",
        "DO calls (sequencer + log + purge keeper)",
      ],
    ];
    for (const [route, c] of counts) {
      rows.push([
        route,
        String(c.d1_round_trips),
        String(c.d1_statements),
        String(c.d1_rows_read ?? "-"),
        String(c.d1_rows_written ?? "-"),
        String(c.kv_operations),
        `${c.sequencer_calls ?? 0} + ${c.log_calls} + ${c.purge_calls ?? 0}`,
      ]);
    }
    console.log(table(rows));
  }
  // CPU per request of the runtime, when measured: baseline/subject, like req/s (not a target).
  const withCpu = results.some((r) => r.ratios.cpu);
  const rows = [
    [
      "path",
      "baseline",
      "req/s",
      "baseline req/s",
      "req/s ratio",
      "p50 ms",
      "p50 ratio",
      "p99 ms",
      "p99 ratio",
      ...(withCpu ? ["CPU µs/req", "CPU ratio"] : []),
      "met",
    ],
  ];
  for (const r of results) {
    // A row's own target (minimum req/s ratio) wins over the target's shared one.
    // A row may also bound its p99 ratio (`p99Target`).
    const ok = r.reportOnly
      ? true
      : r.target !== undefined
        ? r.ratios.rps.median >= r.target && (r.p99Target === undefined || r.ratios.p99.median <= r.p99Target)
        : !targets || (r.ratios.rps.median >= targets.rps && r.ratios.p99.median <= targets.p99);
    missed ||= !ok;
    rows.push([
      r.name,
      r.baseline,
      fixed(r.subject.rps.median, 0),
      fixed(r.reference.rps.median, 0),
      range(r.ratios.rps),
      fixed(r.subject.p50.median, 3),
      range(r.ratios.p50),
      fixed(r.subject.p99.median, 3),
      range(r.ratios.p99),
      ...(withCpu
        ? [r.subject.cpu ? fixed(r.subject.cpu.median, 0) : "-", r.ratios.cpu ? range(r.ratios.cpu) : "-"]
        : []),
      r.reportOnly
        ? "- (no target)"
        : r.target !== undefined
          ? `${ok ? "yes" : "NO"} (>= ${r.target}${r.p99Target !== undefined ? `, p99 <= ${r.p99Target}x` : ""})`
          : targets
            ? ok
              ? "yes"
              : "NO"
            : "-",
    ]);
  }
  // A run that measured nothing (a profile) prints no table.
  if (results.length > 0) {
    console.log(`\n${name}: medians over ${options.rounds} rounds; ratios are path/baseline, median (min..max)`);
    console.log(table(rows));
  }
  if (targets) console.log(`targets: req/s ratio >= ${targets.rps}, p99 ratio <= ${targets.p99}`);
  else if (!results.some((r) => r.target !== undefined) && !checks?.length) {
    console.log("no target set: reported for comparison");
  }
  if (withCpu) {
    console.log("CPU ratio: the baseline's runtime CPU time per request over the path's (higher is better; no target)");
  }
  for (const note of notes ?? []) console.log(note);
  for (const check of checks ?? []) {
    missed ||= !check.ok;
    console.log(
      `${check.ok ? "met" : "MISSED"}: ${check.name} = ${fixed(check.value, check.digits ?? (check.at_most ? 3 : 2))} (target ${check.at_most ? "<=" : ">="} ${check.target}; ${check.detail})`,
    );
  }
  if (bundle) {
    const kib = (n) => `${fixed(n / 1024, 1)} KiB`;
    const ok = bundle.gzip <= bundle.budget;
    missed ||= !ok;
    console.log(
      `bundle: ${kib(bundle.raw)} raw, ${kib(bundle.gzip)} gzip (budget ${kib(bundle.budget)} gzip: ${ok ? "met" : "MISSED"})`,
    );
  }
  return missed;
}
