// A V8 CPU profile of one Worker's isolate in the bench's workerd, taken through workerd's inspector
// (Miniflare's `inspectorPort`) while a load runs, and a summary of where its time went.
import { writeFileSync } from "node:fs";

/** Opens the inspector session of the Worker named `worker` and returns a small CDP client. */
async function session(inspectorPort, worker) {
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json();
  const target = targets.find((t) => t.id === `core:user:${worker}` || t.title === `Worker: ${worker}`);
  if (!target) throw new Error(`no inspector target for ${worker}: ${targets.map((t) => t.id).join(", ")}`);
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true });
    socket.addEventListener("error", reject, { once: true });
  });
  let next = 0;
  const waiting = new Map();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data));
    const pending = waiting.get(message.id);
    if (!pending) return;
    waiting.delete(message.id);
    if (message.error) pending.reject(new Error(JSON.stringify(message.error)));
    else pending.resolve(message.result);
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = ++next;
        waiting.set(id, { resolve, reject });
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

/**
 * Profiles `worker` while `during()` runs (a load run; it may be synchronous, as h2load is), writes
 * the profile to `file` (open it in Chrome DevTools or speedscope) and returns the summary lines.
 */
export async function profileWhile({ inspectorPort, worker, file, during, interval = 200 }) {
  const cdp = await session(inspectorPort, worker);
  try {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval });
    await cdp.send("Profiler.start");
    await during();
    const { profile } = await cdp.send("Profiler.stop");
    writeFileSync(file, JSON.stringify(profile));
    return summarise(profile);
  } finally {
    cdp.close();
  }
}

/** Self time per function and, per frame, inclusive time (a function counted once per sample). */
function summarise(profile, top = 40) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const label = (n) => {
    const f = n.callFrame;
    const where = f.url ? `${f.url.split("/").at(-1)}:${f.lineNumber + 1}` : "";
    return `${f.functionName || "(anonymous)"} ${where}`.trim();
  };
  const self = new Map();
  const inclusive = new Map();
  let total = 0;
  let idle = 0;
  for (const [id, count] of counts) {
    const node = nodes.get(id);
    const name = label(node);
    if (node.callFrame.functionName === "(idle)") {
      idle += count;
      continue;
    }
    total += count;
    self.set(name, (self.get(name) ?? 0) + count);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const frame = label(nodes.get(at));
      if (seen.has(frame)) continue;
      seen.add(frame);
      inclusive.set(frame, (inclusive.get(frame) ?? 0) + count);
    }
  }
  const pct = (n) => `${((100 * n) / total).toFixed(1)}%`.padStart(6);
  const rank = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, n]) => `${pct(n)}  ${name}`);
  return [
    `busy samples ${total}, idle ${idle} (${((100 * total) / (total + idle)).toFixed(0)}% busy)`,
    "self time:",
    ...rank(self),
    "inclusive time:",
    ...rank(inclusive),
  ];
}
