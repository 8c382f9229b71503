// Webhook receivers (docs/events.md): a host that takes the service's change notifications at
// one path, records every POST it gets (headers and body, for tests and `npm start` to read back)
// and answers as its fixture says. Challenges are echoed only for the subscribers the receiver
// accepts, as an endpoint's owner would configure it.

export interface ReceiverFixture {
  /** The path deliveries are posted to. */
  path: string;
  /** Subscribers whose challenges are echoed; absent: every subscriber's. */
  accept_subscribers?: string[];
  /** The status every delivery (not a challenge) is answered with; 204 when absent. */
  delivery_status?: number;
}

interface Received {
  at: string;
  headers: Record<string, string>;
  body: string;
}

const receivers = new Map<string, ReceiverFixture & { received: Received[] }>();

/** At most this many requests are kept per host, the oldest dropped first. */
const KEPT = 200;

export function registerReceiver(host: string, fixture: ReceiverFixture): void {
  receivers.set(host, { ...fixture, received: [] });
}

/** What `host` received so far, oldest first; undefined when it is not a receiver. */
export function receivedBy(host: string): Received[] | undefined {
  return receivers.get(host)?.received;
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** The receiver's answer to a request for `host`, or undefined when `host` is not a receiver. */
export async function receiverAnswer(host: string, request: Request, url: URL): Promise<Response | undefined> {
  const receiver = receivers.get(host);
  if (!receiver) return undefined;
  if (request.method !== "POST" || url.pathname !== receiver.path) return new Response("not found", { status: 404 });
  const body = await request.text();
  const headers: Record<string, string> = {};
  for (const [name, value] of request.headers) headers[name] = value;
  receiver.received.push({ at: new Date().toISOString(), headers, body });
  if (receiver.received.length > KEPT) receiver.received.shift();
  let message: { type?: string; data?: { challenge?: string; subscriber?: string } };
  try {
    message = JSON.parse(body);
  } catch {
    return json({ error: "not JSON" }, 400);
  }
  if (message.type === "subscription.challenge") {
    const subscriber = message.data?.subscriber ?? "";
    const accepted = !receiver.accept_subscribers || receiver.accept_subscribers.includes(subscriber);
    return accepted ? json({ challenge: message.data?.challenge }) : json({ error: "not my subscriber" }, 403);
  }
  return new Response(null, { status: receiver.delivery_status ?? 204 });
}
