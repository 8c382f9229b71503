// Benchmark baseline: one KV get of the key named by the path, returned as is. Resolver paths that
// read one snapshot are compared with it, which takes local KV's simulator cost out of the ratio.
export default {
  async fetch(request, env) {
    const url = request.url;
    const key = url.slice(url.indexOf("/", url.indexOf("//") + 2) + 1);
    const value = await env.KV.get(key, "text");
    if (value === null) return new Response("not found", { status: 404 });
    return new Response(value, { headers: { "content-type": "application/json" } });
  },
};
