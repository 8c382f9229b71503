// `npm run cold-start -- [N]`: starts and stops the local service cold N times (default 20), each
// time with a fresh state directory and free ports, exactly as the Node-side tests start it
// (test/local-service.ts), and reports how many starts failed and how long a start takes.
// Exits non-zero when any start fails or leaves a port listening after its stop.
import { connect } from "node:net";
import { startService, stopService } from "../test/local-service.ts";

const runs = Number(process.argv[2] ?? 20);
if (!Number.isInteger(runs) || runs < 1) {
  console.error("usage: npm run cold-start -- [number of starts, default 20]");
  process.exit(2);
}

/** True when something still accepts connections at the URL's port. */
function listening(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function coldStart() {
  const started = performance.now();
  const { info, child } = await startService();
  const seconds = (performance.now() - started) / 1000;
  try {
    const record = await fetch(`${info.resolver}/api/p/${info.demo[0]?.id}.json`);
    if (!record.ok) throw new Error(`the demo passport's record answered ${record.status}`);
  } finally {
    await stopService(child);
  }
  const left = [];
  for (const url of [info.resolver, info.control, info.marketplace]) if (await listening(url)) left.push(url);
  if (left.length > 0) throw new Error(`still listening after the stop: ${left.join(", ")}`);
  return seconds;
}

const times = [];
const failures = [];
for (let run = 1; run <= runs; run++) {
  try {
    const seconds = await coldStart();
    times.push(seconds);
    console.log(`start ${run}/${runs}: ok in ${seconds.toFixed(1)}s`);
  } catch (error) {
    failures.push(run);
    console.log(`start ${run}/${runs}: FAILED\n${error.message}`);
  }
}

times.sort((a, b) => a - b);
const median = times.length ? times[Math.floor((times.length - 1) / 2)].toFixed(1) : "-";
const slowest = times.length ? times[times.length - 1].toFixed(1) : "-";
console.log(
  `\n${times.length} of ${runs} cold starts succeeded` +
    (failures.length ? ` (failed: ${failures.join(", ")})` : "") +
    `; median ${median}s, slowest ${slowest}s`,
);
process.exit(failures.length ? 1 : 0);
