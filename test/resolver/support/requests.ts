import { IDENTITY_ID_ALPHABET, mintIdentityId } from "@passport/domain";
import fc from "fast-check";

const printable = fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code));
const printableText = (max: number) => fc.string({ unit: printable, maxLength: max });

/** Well-formed, damaged and random identity id candidates; `known` are ids that were published. */
function idCandidate(known: readonly string[]): fc.Arbitrary<string> {
  const minted = fc.constant(null).map(() => mintIdentityId());
  const base = known.length > 0 ? fc.oneof(fc.constantFrom(...known), minted) : minted;
  return fc.oneof(
    base,
    fc
      .tuple(base, fc.integer({ min: 4, max: 29 }), fc.constantFrom(...IDENTITY_ID_ALPHABET))
      .map(([id, i, c]) => id.slice(0, i) + c + id.slice(i + 1)),
    fc.tuple(base, fc.integer({ min: 0, max: 29 })).map(([id, n]) => id.slice(0, n)),
    base.map((id) => id.toUpperCase()),
    fc.string({ maxLength: 40 }),
    printableText(40),
  );
}

const segment = (known: readonly string[]) =>
  fc.oneof(
    fc.constantFrom("api", "p", "schemas", "health", "passport-record.json", "", ".", "..", "%", "%2F", "%zz", "%00"),
    idCandidate(known).map((id) => `${id}.json`),
    idCandidate(known),
    fc.string({ maxLength: 30 }).map(encodeURIComponent),
    printableText(30),
    fc.string({ maxLength: 20, unit: "grapheme" }),
  );

/** Paths that often hit real routes and often miss them, with odd encodings and query strings. */
export function pathArbitrary(known: readonly string[]): fc.Arbitrary<string> {
  const routed = fc.oneof(
    ...(known.length > 0 ? [fc.constantFrom(...known).map((id) => `/api/p/${id}.json`)] : []),
    idCandidate(known).map((id) => `/api/p/${id}.json`),
    idCandidate(known).map((id) => `/p/${id}`),
    fc.constantFrom("/", "/health", "/schemas/passport-record.json", "/p", "/api/p/"),
  );
  const arbitrary = fc.array(segment(known), { maxLength: 5 }).map((parts) => `/${parts.join("/")}`);
  const query = fc.option(
    printableText(30).map((q) => `?${q}`),
    { nil: "" },
  );
  return fc.tuple(fc.oneof(routed, arbitrary), query).map(([path, q]) => path + q);
}

export const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PURGE", "PROPFIND", "MKCOL"];

/** Methods, weighted toward reads, plus arbitrary upper-case tokens. */
export const methodArbitrary = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("GET", "HEAD") },
  { weight: 3, arbitrary: fc.constantFrom(...METHODS) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Z]{1,12}$/) },
);

const FORBIDDEN = new Set(["host", "content-length", "transfer-encoding", "connection", "upgrade", "expect", "te"]);
const headerName = fc.oneof(
  fc.constantFrom("if-none-match", "origin", "accept", "access-control-request-method", "cache-control", "range"),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,24}$/).filter((name) => !FORBIDDEN.has(name)),
);
const headerValue = fc.oneof(
  printableText(60).map((v) => v.trim()),
  fc.constantFrom('"sha-256:abc"', "*", 'W/"x", "y"', "https://app.example", "GET"),
);

/**
 * Arbitrary request headers (names and values a client can put on the wire); half of them carry
 * an `If-None-Match` that often names one of `etags`.
 */
export function headersArbitrary(etags: readonly string[] = []): fc.Arbitrary<Record<string, string>> {
  const plain = fc.dictionary(headerName, headerValue, { maxKeys: 6 });
  const tag = etags.length > 0 ? fc.oneof(fc.constantFrom(...etags), headerValue) : headerValue;
  const conditional = fc.tuple(plain, tag).map(([headers, value]) => ({ ...headers, "if-none-match": value }));
  return fc.oneof(plain, conditional);
}

/** Arbitrary bodies for methods that may carry one. */
export const bodyArbitrary = fc.option(fc.oneof(fc.string({ maxLength: 200 }), fc.json()), { nil: undefined });
