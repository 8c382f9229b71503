// Benchmark baseline: the least a Worker can do, answering every request with a fixed 1 KB JSON
// document. Resolver paths that read no storage are compared with it (scripts/bench).
const BODY = JSON.stringify({
  kind: "baseline",
  note: "fixed document of about one kilobyte",
  padding: "x".repeat(960),
});

export default {
  fetch() {
    return new Response(BODY, { headers: { "content-type": "application/json" } });
  },
};
