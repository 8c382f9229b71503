// The one RFC 9421 signature a Web Bot Auth request carries, read strictly and turned into its
// signature base here rather than by the library's verifier: the library compares `created` and
// `expires` with its own clock and no skew, so the documented 5 s either way could not be honoured,
// and the provider needs the parsed signature (its keyid, its window, what it covers) before it
// looks anything up. Anything outside the narrow grammar agents' signers write is refused, never
// guessed at: one dictionary member, plain component names, integer and plain-string parameters.

/** Clock difference tolerated between the agent and the provider, either way (docs/reciprocal-trust.md). */
export const CLOCK_SKEW_MS = 5_000;

/** A request's signature, as its `Signature-Input` and `Signature` headers state it. */
export interface MessageSignature {
  /** The components it covers, in the order signed (lower case). */
  components: string[];
  /** Its `Signature-Input` member value after `label=`: the `@signature-params` line of the base. */
  params: string;
  /** Milliseconds since the epoch. */
  created: number;
  expires: number;
  keyid: string;
  tag?: string;
  nonce?: string;
  alg?: string;
  signature: Uint8Array<ArrayBuffer>;
}

export type SignatureReading =
  | { ok: true; signature: MessageSignature }
  | { ok: false; problem: "signature_missing" | "signature_invalid"; detail: string };

const LABEL = /^([a-z*][a-z0-9_.*-]{0,63})=(.*)$/s;
const INPUT =
  /^\(((?:"[a-z0-9@_.-]{1,64}"(?: "[a-z0-9@_.-]{1,64}")*)?)\)((?:;[a-z*][a-z0-9_.*-]{0,63}=(?:\d{1,15}|"[\x20\x21\x23-\x5b\x5d-\x7e]{0,512}"))*)$/;
const PARAM = /;([a-z*][a-z0-9_.*-]{0,63})=(\d{1,15}|"[^"]*")/g;
const SIGNATURE = /^([a-z*][a-z0-9_.*-]{0,63})=:([A-Za-z0-9+/]{1,1400}={0,2}):$/;
/** Derived components this reader can compute; any other is refused. */
const DERIVED = new Set(["@method", "@authority", "@path", "@query", "@scheme", "@target-uri", "@request-target"]);

const invalid = (detail: string): SignatureReading => ({ ok: false, problem: "signature_invalid", detail });

/**
 * Reads the request's one signature; `signature_missing` without the headers, `signature_invalid`
 * for anything this reader does not accept.
 * @example
 * const read = readSignature(request.headers);
 * if (read.ok) read.signature.keyid;
 */
export function readSignature(headers: Headers): SignatureReading {
  const input = headers.get("signature-input");
  const value = headers.get("signature");
  if (!input || !value) {
    return { ok: false, problem: "signature_missing", detail: "The request carries no HTTP message signature." };
  }
  const labelled = LABEL.exec(input.trim());
  const signed = SIGNATURE.exec(value.trim());
  if (!labelled || !signed) return invalid("The signature headers do not parse (one signature is accepted).");
  const [, label, params = ""] = labelled;
  if (signed[1] !== label) return invalid("The Signature and Signature-Input headers name different signatures.");
  const parts = INPUT.exec(params);
  if (!parts) return invalid("The signature headers do not parse (one signature is accepted).");
  const components = [...(parts[1] ?? "").matchAll(/"([^"]+)"/g)].map((match) => match[1] as string);
  if (new Set(components).size !== components.length) return invalid("The signature names a component twice.");
  const unknown = components.find((component) => component.startsWith("@") && !DERIVED.has(component));
  if (unknown) return invalid(`The signature covers ${unknown}, which is not checked here.`);
  const named = new Map<string, string>();
  for (const [, name = "", raw = ""] of (parts[2] ?? "").matchAll(PARAM)) {
    if (named.has(name)) return invalid(`The signature states ${name} twice.`);
    named.set(name, raw);
  }
  const integer = (name: string) => {
    const raw = named.get(name);
    return raw !== undefined && !raw.startsWith('"') ? Number(raw) * 1000 : undefined;
  };
  const text = (name: string) => {
    const raw = named.get(name);
    return raw?.startsWith('"') ? raw.slice(1, -1) : undefined;
  };
  const created = integer("created");
  const expires = integer("expires");
  const keyid = text("keyid");
  if (created === undefined || expires === undefined || !keyid) {
    return invalid("The signature must state created, expires and keyid.");
  }
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = Uint8Array.from(atob(signed[2] ?? ""), (c) => c.charCodeAt(0));
  } catch {
    return invalid("The signature is not base64.");
  }
  const tag = text("tag");
  const nonce = text("nonce");
  const alg = text("alg");
  return {
    ok: true,
    signature: {
      components,
      params,
      created,
      expires,
      keyid,
      ...(tag !== undefined ? { tag } : {}),
      ...(nonce !== undefined ? { nonce } : {}),
      ...(alg !== undefined ? { alg } : {}),
      signature: bytes,
    },
  };
}

/**
 * The value of a derived component for `url` (as `http-message-sig`, the library agents sign
 * with, computes it: the authority without a default port, the query with its `?` or empty).
 */
function derived(component: string, method: string, url: URL): string {
  switch (component) {
    case "@method":
      return method.toUpperCase();
    case "@authority": {
      const port = url.port ? Number(url.port) : undefined;
      return `${url.hostname}${port && port !== 80 && port !== 443 ? `:${port}` : ""}`;
    }
    case "@path":
      return url.pathname;
    case "@query":
      return url.search;
    case "@scheme":
      return url.protocol.slice(0, -1);
    case "@target-uri":
      return url.href;
    default:
      return `${url.pathname}${url.search}`;
  }
}

/**
 * The signature base (RFC 9421 section 2.5) of `signature` over the request at `url`; undefined
 * when a covered header is absent (a signature over a header the request lacks does not count).
 */
export function signatureBase(
  signature: MessageSignature,
  request: { method: string; url: URL; headers: Headers },
): string | undefined {
  const lines: string[] = [];
  for (const component of signature.components) {
    const value = component.startsWith("@")
      ? derived(component, request.method, request.url)
      : request.headers.get(component);
    if (value === null) return undefined;
    lines.push(`"${component}": ${value}`);
  }
  lines.push(`"@signature-params": ${signature.params}`);
  return lines.join("\n");
}

/**
 * Why a signature made at `created` and expiring at `expires` (ms) is not within the window at
 * `now`, or undefined when it is. The clock skew counts both ways: `created` up to 5 s ahead,
 * `expires` up to 5 s behind, and an age up to the window plus 5 s; the lifetime the signer
 * claims (`expires - created`) is its own statement and gets none.
 */
export function outsideWindow(
  created: number,
  expires: number,
  now: number,
  windowSeconds: number,
): string | undefined {
  const window = windowSeconds * 1000;
  if (!(expires >= created)) return "The signature expires before it was created.";
  if (created > now + CLOCK_SKEW_MS) return "The signature was created in the future.";
  if (expires - created > window || now - created > window + CLOCK_SKEW_MS) {
    return `The signature is older than, or valid for longer than, the ${windowSeconds} s window.`;
  }
  if (expires < now - CLOCK_SKEW_MS) return "The signature has expired.";
  return undefined;
}
