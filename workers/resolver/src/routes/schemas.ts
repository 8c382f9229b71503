import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_ETAG_HEADERS, ifNoneMatch } from "../http.ts";
import agentActionEnvelopeSchema from "../schemas/agent-action-envelope.schema.json";
import passportDecisionReceiptSchema from "../schemas/passport-decision-receipt.schema.json";
import passportPolicySchema from "../schemas/passport-policy.schema.json";
import passportRecordSchema from "../schemas/passport-record.schema.json";
import passportStatusSchema from "../schemas/passport-status.schema.json";
import signatureAgentCardSchema from "../schemas/signature-agent-card.schema.json";
import webBotAuthSignatureAgentCardSchema from "../schemas/web-bot-auth-signature-agent-card.schema.json";

export const schemas = new Hono<{ Bindings: Env }>();

/** FNV-1a over the text: a cheap, stable validator for a document that changes only with a deploy. */
function entityTag(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return `"fnv1a-${(hash >>> 0).toString(16)}-${text.length}"`;
}

/** Serves one generated JSON Schema document with its entity tag. */
function serveSchema(path: string, document: unknown): void {
  const text = JSON.stringify(document);
  const etag = entityTag(text);
  schemas.get(path, (c) => {
    const headers = { ...CORS_ETAG_HEADERS, ...cacheHeaders("short"), etag };
    if (ifNoneMatch(c.req.header("if-none-match") ?? null, etag)) return new Response(null, { status: 304, headers });
    return new Response(text, { headers: { ...headers, "content-type": "application/schema+json" } });
  });
}

serveSchema("/passport-record.json", passportRecordSchema);
serveSchema("/agent-action-envelope.json", agentActionEnvelopeSchema);
serveSchema("/passport-status.json", passportStatusSchema);
serveSchema("/passport-policy.json", passportPolicySchema);
serveSchema("/passport-decision-receipt.json", passportDecisionReceiptSchema);
serveSchema("/signature-agent-card.json", signatureAgentCardSchema);
serveSchema("/web-bot-auth-signature-agent-card.json", webBotAuthSignatureAgentCardSchema);
