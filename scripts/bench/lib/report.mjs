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
    const rows = [["route", "D1 round trips", "D1 statements", "KV operations", "log calls"]];
    for (const [route, c] of counts) {
      rows.push([
        route,
        String(c.d1_round_trips),
        String(c.d1_statements),
        String(c.kv_operations),
        String(c.log_calls),
      ]);
    }
    console.log(table(rows));
  }
  const rows = [
    ["path", "baseline", "req/s", "baseline req/s", "req/s ratio", "p50 ms", "p50 ratio", "p99 ms", "p99 ratio", "met"],
  ];
  for (const r of results) {
    // A row's own target (minimum req/s ratio) wins over the target's shared one.
    const ok =
      r.target !== undefined
        ? r.ratios.rps.median >= r.target
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
      r.target !== undefined ? `${ok ? "yes" : "NO"} (>= ${r.target})` : targets ? (ok ? "yes" : "NO") : "-",
    ]);
  }
  console.log(`\n${name}: medians over ${options.rounds} rounds; ratios are path/baseline, median (min..max)`);
  console.log(table(rows));
  if (targets) console.log(`targets: req/s ratio >= ${targets.rps}, p99 ratio <= ${targets.p99}`);
  else if (!results.some((r) => r.target !== undefined)) console.log("no target set: reported for comparison");
  for (const note of notes ?? []) console.log(note);
  for (const check of checks ?? []) {
    missed ||= !check.ok;
    console.log(
      `${check.ok ? "met" : "MISSED"}: ${check.name} = ${fixed(check.value, 3)} (target ${check.below ? "<" : ">="} ${check.target}; ${check.detail})`,
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
