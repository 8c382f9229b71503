// A stand-in for the control plane's Worker where the resolver runs alone (the resolver's own
// tests): its PublicationSequencer knows no passport, so the status route answers 404. The status
// route's real answers are tested beside the real control plane (test/verifier/status-route.test.ts).
import { DurableObject } from "cloudflare:workers";

export class PublicationSequencer extends DurableObject {
  async status() {
    return { found: false };
  }
}

export default {
  fetch: () => new Response(null, { status: 404 }),
};
