// Benchmark reference for the status route: one RPC call to a Durable Object addressed by the id
// in the path, which answers a token-sized string from memory. The status route does this hop and
// no more on the hot path (the sequencer answers from memory, re-signing at most every 5 s), so
// its req/s against this Worker's is what the route itself costs beyond the Durable Object call.
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
    const answer = await env.OBJECT.getByName(id).status(id);
    return new Response(JSON.stringify({ identity_id: answer.identity_id, token: answer.token }), {
      headers: { "content-type": "application/json", "cache-control": "no-store" },
    });
  },
};
