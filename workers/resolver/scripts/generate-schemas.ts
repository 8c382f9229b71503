// Regenerates the JSON Schemas the resolver serves from the zod schemas in packages/domain, so the
// resolver can serve them without carrying zod. Run: `pnpm run schemas` (a test fails on drift).
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  agentActionEnvelopeJsonSchema,
  decisionReceiptJsonSchema,
  passportPolicyJsonSchema,
  passportRecordJsonSchema,
  passportStatusJsonSchema,
  signatureAgentCardJsonSchema,
  webBotAuthSignatureAgentCardJsonSchema,
} from "@passport/domain";

const here = dirname(fileURLToPath(import.meta.url));
const outputs = {
  "passport-record.schema.json": passportRecordJsonSchema(),
  "agent-action-envelope.schema.json": agentActionEnvelopeJsonSchema(),
  "passport-status.schema.json": passportStatusJsonSchema(),
  "passport-policy.schema.json": passportPolicyJsonSchema(),
  "passport-decision-receipt.schema.json": decisionReceiptJsonSchema(),
  "signature-agent-card.schema.json": signatureAgentCardJsonSchema(),
  "web-bot-auth-signature-agent-card.schema.json": webBotAuthSignatureAgentCardJsonSchema(),
};
const files = Object.entries(outputs).map(([name, schema]) => {
  const out = join(here, "..", "src", "schemas", name);
  writeFileSync(out, `${JSON.stringify(schema, null, 2)}\n`);
  return out;
});
const formatted = spawnSync("pnpm", ["exec", "biome", "format", "--write", ...files], { stdio: "inherit" });
process.exit(formatted.status ?? 1);
