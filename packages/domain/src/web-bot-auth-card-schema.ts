import { z } from "zod";

// The Signature Agent Card as draft-meunier-webbotauth-registry-04 defines it, in our words: what
// any conforming card must satisfy, whoever serves it. The card the resolver serves
// (`SignatureAgentCard`) is one such card; a test holds it to this schema too.
//
// The draft's rules: members are OAuth client metadata (RFC 7591) names, used as an OAuth Client
// ID Metadata Document uses them, plus one `web_bot_auth` object for what is particular to bots.
// Every member is optional but at least one is present; members a reader does not know are
// ignored (so both objects admit other members); a card never has both `jwks` and `jwks_uri`.

// The scheme is also a pattern so the generated JSON Schema states it (`format: uri` alone would not).
const Https = z
  .url({ protocol: /^https$/ })
  .regex(/^https:\/\//)
  .max(2048);
const HttpOrData = z
  .url({ protocol: /^(https?|data)$/ })
  .regex(/^(https?:\/\/|data:)/)
  .max(8192);

const Jwk = z
  .looseObject({ kty: z.string().min(1) })
  .describe("A JSON Web Key (RFC 7517 section 4); public keys only in a card.");

/** The `web_bot_auth` object's members the draft defines; others are registered later and ignored here. */
const WebBotAuthMetadata = z
  .looseObject({
    "expected-user-agent": z
      .string()
      .min(1)
      .optional()
      .describe("A User-Agent string the agent sends, or a prefix of one; `*` is a wildcard."),
    "rfc9309-product-token": z.string().min(1).optional().describe("The robots.txt product token the agent obeys."),
    "rfc9309-compliance": z
      .boolean()
      .optional()
      .describe("Whether the agent claims to follow robots.txt (RFC 9309); absent means false."),
    trigger: z
      .enum(["fetcher", "crawler"])
      .optional()
      .describe("fetcher: each request is started by a user; crawler: the agent scans on its own."),
    purpose: z.string().min(1).optional().describe("What the fetched data is used for (for example search)."),
    "targeted-content": z.string().min(1).optional().describe("The kind of content the agent looks for."),
    "rate-control": z.string().min(1).optional().describe("How an origin can slow the agent down."),
    "rate-expectation": z.string().min(1).optional().describe("The request volume or burstiness to expect."),
    "known-urls": z
      .array(z.string().min(1))
      .optional()
      .describe("Paths or URLs the agent predictably fetches; `*` is a wildcard."),
    ips_uri: Https.optional().describe("Where the agent's IP address list is published."),
  })
  .describe("Bot-specific metadata (the draft's one extension to OAuth client metadata).");

const CardShape = z.looseObject({
  client_id: Https.optional().describe(
    "The card's resolvable identity: the URL it is served at, compared as a plain string with the URL it was fetched from.",
  ),
  client_name: z.string().min(1).optional().describe("A friendly name for the signature agent."),
  client_uri: HttpOrData.optional().describe(
    "A page describing the agent: what it does, how it treats what it fetches.",
  ),
  logo_uri: HttpOrData.optional().describe("An image identifying the agent."),
  contacts: z.array(z.string().min(1)).optional().describe("URIs that reach the agent's operator, typically mailto:."),
  jwks_uri: Https.optional().describe("Where the agent's JWK Set is served; never beside jwks."),
  jwks: z
    .looseObject({ keys: z.array(Jwk) })
    .optional()
    .describe("The agent's JWK Set inline (RFC 7517 section 5); never beside jwks_uri."),
  web_bot_auth: WebBotAuthMetadata.optional(),
});

export const WebBotAuthSignatureAgentCard = CardShape.refine((card) => Object.keys(card).length > 0, {
  message: "A Signature Agent Card sets at least one parameter.",
}).refine((card) => card.jwks === undefined || card.jwks_uri === undefined, {
  message: "A Signature Agent Card carries jwks or jwks_uri, not both.",
});
export type WebBotAuthSignatureAgentCard = z.infer<typeof WebBotAuthSignatureAgentCard>;
