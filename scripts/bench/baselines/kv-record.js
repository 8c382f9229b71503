// Benchmark baseline: the record route's storage call and answer with nothing of ours around it.
// One KV getWithMetadata of the key named by the path (the same read the resolver makes), and the
// value returned with the headers a published record is answered with (cache, CORS, cache tag,
// ETag, signature and log index from the metadata). No id check, no router, no conditional
// request, no problem answers: what the resolver adds beyond this is its own cost.
const FIXED = {
  "content-type": "application/json; charset=utf-8",
  "access-control-allow-origin": "*",
  "x-content-type-options": "nosniff",
  "access-control-expose-headers": "ETag, Passport-Signature, Passport-Log-Index",
  "cache-control": "public, max-age=15",
  "cloudflare-cdn-cache-control": "public, max-age=60, stale-if-error=0",
};

export default {
  async fetch(request, env) {
    const url = request.url;
    const key = url.slice(url.indexOf("/", url.indexOf("//") + 2) + 1);
    const { value, metadata } = await env.KV.getWithMetadata(key, "text");
    if (value === null) return new Response("not found", { status: 404 });
    return new Response(value, {
      headers: {
        ...FIXED,
        "cache-tag": `passport-${key}`,
        etag: `"${metadata.digest}"`,
        "passport-signature": metadata.signature,
        "passport-log-index": String(metadata.log_index),
      },
    });
  },
};
