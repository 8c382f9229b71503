// Benchmark reference for the status route: one RPC call to a Durable Object addressed by the id
// in the path, which answers a token-sized string from memory. The status route does this hop and
// no more on the hot path (the sequencer answers from memory, re-signing at most every 5 s), so
// its req/s against this Worker's is what the route itself costs beyond the Durable Object call.
// A request naming a client address (`cf-connecting-ip`) first makes one call to the rate limiter
// bound as LIMIT, as the status route does for such a request.
import { DurableObject } from "cloudflare:workers";

const TOKEN = "x".repeat(560);

export class Reference extends DurableObject {
  status(identityId) {
    return { found: true, pending: false, identity_id: identityId, token: TOKEN };
  }
}

export default {
  async fetch(request, env) {
    const url = request.url;
    const id = url.slice(url.lastIndexOf("/") + 1);
    const address = request.headers.get("cf-connecting-ip");
    if (address && env.LIMIT) {
      const { success } = await env.LIMIT.limit({ key: `client:${address}` });
      if (!success) return new Response("limited", { status: 429 });
    }
    const answer = await env.OBJECT.getByName(id).status(id);
    return new Response(JSON.stringify({ identity_id: answer.identity_id, token: answer.token }), {
      headers: { "content-type": "application/json", "cache-control": "no-store" },
    });
  },
};
