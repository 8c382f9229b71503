// Change notifications (the service's docs/events.md): a subscriber's endpoint receives a signed
// "re-check now" for the passports it follows. `verifyNotification` checks one delivery: the
// Standard Webhooks asymmetric signature (`webhook-signature: v1a,<base64 Ed25519>` over
// `{webhook-id}.{webhook-timestamp}.{body}`) by an Ed25519 key of the service's published key set,
// the timestamp within the replay window, and the id not seen before. It answers which passports
// to re-check; it never treats the body as the record, which the verifier reads again.
import { readCappedBytes } from "./http.ts";
import type { JwkSet, PublicJwk } from "./keys.ts";

/** Five minutes either side of now, the window Standard Webhooks recommends. */
export const NOTIFICATION_TOLERANCE_SECONDS = 300;

/** A notification body larger than this is refused unread: a real one is well under a kilobyte. */
const MAX_NOTIFICATION_BYTES = 64 * 1024;

/**
 * Remembers the ids of deliveries already accepted, each until its replay window has passed. A
 * delivery is sent at least once: a retry carries the same `webhook-id`, so a second copy is told
 * apart from a first one.
 */
export interface NotificationIdStore {
  /** Records `id` until `until` (ms since the epoch); false when it was already recorded. */
  firstSeen(id: string, until: number): boolean | Promise<boolean>;
}

/** An in-memory {@link NotificationIdStore} for one isolate or process, bounded by `maxIds`. */
export class MemoryNotificationIds implements NotificationIdStore {
  readonly #ids = new Map<string, number>();
  readonly #maxIds: number;
  readonly #now: () => number;

  constructor(maxIds = 10_000, now: () => number = Date.now) {
    this.#maxIds = maxIds;
    this.#now = now;
  }

  firstSeen(id: string, until: number): boolean {
    const now = this.#now();
    const held = this.#ids.get(id);
    if (held !== undefined && held > now) return false;
    this.#ids.set(id, until);
    for (const [oldest, expires] of this.#ids) {
      if (this.#ids.size <= this.#maxIds && expires > now) break;
      this.#ids.delete(oldest);
    }
    return true;
  }
}

export interface NotificationOptions {
  /** The service's published key set (its `/.well-known/jwks.json`), pinned; its Ed25519 keys are used. */
  keys: JwkSet | unknown;
  /** How far the delivery's timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Ids already accepted; without one, a copy within the window is accepted again. */
  seen?: NotificationIdStore;
  now?: () => number;
}

/** A passport a notification says changed: the version and digest the record now has. */
export interface NotifiedVersion {
  identityId: string;
  recordVersion: number;
  digest: string;
  /** The kinds the subscription asked for that this change matched (lifecycle, binding, key, authority, version). */
  events: string[];
  changeKinds: string[];
  publishedAt: string;
}

export type NotificationCheck =
  | {
      ok: true;
      /** The `webhook-id`: the same on every attempt of one delivery. */
      id: string;
      type: "passport.changed";
      /** When the service signed this attempt, in seconds since the epoch. */
      timestamp: number;
      subscriptionId: string;
      /** Re-check these passports now; their cached records and tokens are out of date. */
      recheck: NotifiedVersion[];
    }
  | {
      ok: true;
      id: string;
      type: "subscription.challenge";
      timestamp: number;
      subscriptionId: string;
      /** Who asks to subscribe this endpoint; answer only subscribers you expect. */
      subscriber: string;
      /** Echo it as `{"challenge": …}` with a 2xx to confirm the subscription. */
      challenge: string;
      recheck: [];
    }
  | {
      ok: false;
      /**
       * `missing_headers`: not a Standard Webhooks delivery; `stale`: outside the replay window;
       * `no_key`: the key set holds no Ed25519 key; `bad_signature`: no key verifies it (forged or
       * altered); `duplicate`: an id already accepted (a retry: answer 2xx, act once); `malformed`:
       * signed, but not a notification this verifier knows.
       */
      problem: "missing_headers" | "stale" | "no_key" | "bad_signature" | "duplicate" | "malformed";
    };

type HeaderSource = Headers | Record<string, string | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  return headers instanceof Headers ? (headers.get(name) ?? undefined) : headers[name];
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

const imported = new WeakMap<object, Promise<CryptoKey[]>>();

/** The Ed25519 keys of a key set, imported once per key set object. */
function ed25519Keys(set: unknown): Promise<CryptoKey[]> {
  const keys = (set as Partial<JwkSet> | null)?.keys;
  if (!Array.isArray(keys)) return Promise.reject(new TypeError("keys: expected a JWK Set"));
  let held = imported.get(keys);
  if (!held) {
    const usable = (keys as PublicJwk[]).filter(
      (k) => k?.kty === "OKP" && k.crv === "Ed25519" && typeof k.x === "string",
    );
    held = Promise.all(
      usable.map((k) =>
        crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: k.x }, { name: "Ed25519" }, false, ["verify"]),
      ),
    );
    imported.set(keys, held);
  }
  return held;
}

const isString = (value: unknown): value is string => typeof value === "string";

function readBody(id: string, timestamp: number, body: string): NotificationCheck {
  let message: { type?: unknown; data?: Record<string, unknown> };
  try {
    message = JSON.parse(body);
  } catch {
    return { ok: false, problem: "malformed" };
  }
  const data = message?.data;
  if (!data || !isString(data.subscription_id)) return { ok: false, problem: "malformed" };
  if (message.type === "subscription.challenge") {
    if (!isString(data.challenge) || !isString(data.subscriber)) return { ok: false, problem: "malformed" };
    return {
      ok: true,
      id,
      type: "subscription.challenge",
      timestamp,
      subscriptionId: data.subscription_id,
      subscriber: data.subscriber,
      challenge: data.challenge,
      recheck: [],
    };
  }
  if (message.type !== "passport.changed") return { ok: false, problem: "malformed" };
  const { identity_id, record_version, digest, events, change_kinds, published_at } = data;
  if (
    !isString(identity_id) ||
    !Number.isInteger(record_version) ||
    !isString(digest) ||
    !isString(published_at) ||
    !Array.isArray(events) ||
    !events.every(isString) ||
    !Array.isArray(change_kinds) ||
    !change_kinds.every(isString)
  ) {
    return { ok: false, problem: "malformed" };
  }
  return {
    ok: true,
    id,
    type: "passport.changed",
    timestamp,
    subscriptionId: data.subscription_id,
    recheck: [
      {
        identityId: identity_id,
        recordVersion: record_version as number,
        digest,
        events,
        changeKinds: change_kinds,
        publishedAt: published_at,
      },
    ],
  };
}

/**
 * Checks one delivery as received: `headers` and the body exactly as sent (the signature covers
 * its bytes). Order of checks: headers, replay window, signature, then the id (a duplicate is only
 * reported for a delivery that verifies), then the body.
 * @example
 * const check = await verifyNotification(request.headers, await request.text(), { keys, seen });
 * if (check.ok && check.type === "passport.changed") for (const p of check.recheck) await verifier.invalidate(p.identityId);
 */
export async function verifyNotification(
  headers: HeaderSource,
  body: string,
  options: NotificationOptions,
): Promise<NotificationCheck> {
  const id = header(headers, "webhook-id");
  const timestampText = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestampText || !signatures || !/^[0-9]{1,12}$/.test(timestampText)) {
    return { ok: false, problem: "missing_headers" };
  }
  const timestamp = Number(timestampText);
  const now = (options.now ?? Date.now)();
  const tolerance = options.toleranceSeconds ?? NOTIFICATION_TOLERANCE_SECONDS;
  if (Math.abs(now / 1000 - timestamp) > tolerance) return { ok: false, problem: "stale" };
  const keys = await ed25519Keys(options.keys);
  if (keys.length === 0) return { ok: false, problem: "no_key" };
  const signed = new TextEncoder().encode(`${id}.${timestampText}.${body}`);
  // The header may hold several space-separated signatures; only the asymmetric `v1a` ones count.
  const candidates = signatures
    .split(" ")
    .filter((entry) => entry.startsWith("v1a,"))
    .map((entry) => base64Bytes(entry.slice(4)))
    .filter((bytes): bytes is Uint8Array<ArrayBuffer> => bytes !== undefined && bytes.byteLength === 64);
  let verified = false;
  for (const signature of candidates) {
    for (const key of keys) {
      if (await crypto.subtle.verify({ name: "Ed25519" }, key, signature, signed)) verified = true;
      if (verified) break;
    }
    if (verified) break;
  }
  if (!verified) return { ok: false, problem: "bad_signature" };
  if (options.seen && !(await options.seen.firstSeen(id, (timestamp + tolerance) * 1000))) {
    return { ok: false, problem: "duplicate" };
  }
  return readBody(id, timestamp, body);
}

/** What a receiver drops when a passport changed: a verifier's cached record, a stapler's token. */
export interface Invalidates {
  invalidate(identityId: string): void | Promise<void>;
}

export interface ReceiverOptions extends NotificationOptions {
  /** Their cached copies of each notified passport are made stale at once (a Verifier, a StatusStapler). */
  invalidates?: Invalidates[];
  /** Whether to confirm a subscription this endpoint is asked to take; default: every one. */
  acceptSubscriber?: (subscriber: string, subscriptionId: string) => boolean | Promise<boolean>;
  /** Told of each verified change, after the caches were invalidated. */
  onChange?: (passports: NotifiedVersion[]) => void | Promise<void>;
}

const answer = (status: number, body?: unknown) =>
  new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: body === undefined ? {} : { "content-type": "application/json" },
  });

/**
 * A ready endpoint for change notifications (a Worker's `fetch`, a route handler): echoes the
 * challenges of accepted subscribers, invalidates the caches of every notified passport and
 * answers 204, answers a duplicate 204 without acting again, and refuses anything that does not
 * verify with 401 (or 400 for a body that is not a notification).
 * @example
 * export default { fetch: (request) => receiveNotification(request, { keys, seen, invalidates: [verifier] }) };
 */
export async function receiveNotification(request: Request, options: ReceiverOptions): Promise<Response> {
  if (request.method !== "POST") return answer(405);
  // The body is read as an answer's would be: capped while it streams in.
  const read = await readCappedBytes(new Response(request.body, { headers: request.headers }), MAX_NOTIFICATION_BYTES);
  if (!read.ok) return answer(413);
  const check = await verifyNotification(request.headers, new TextDecoder().decode(read.bytes), options);
  if (!check.ok) {
    if (check.problem === "duplicate") return answer(204);
    return answer(check.problem === "malformed" ? 400 : 401, { problem: check.problem });
  }
  if (check.type === "subscription.challenge") {
    const accepted = (await options.acceptSubscriber?.(check.subscriber, check.subscriptionId)) ?? true;
    return accepted ? answer(200, { challenge: check.challenge }) : answer(403);
  }
  for (const passport of check.recheck) {
    await Promise.all((options.invalidates ?? []).map((cache) => cache.invalidate(passport.identityId)));
  }
  await options.onChange?.(check.recheck);
  return answer(204);
}
