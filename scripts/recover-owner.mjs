// `npm run recover-owner -- --org ORG --subject NEW_SUBJECT --approved-by OPERATOR --reason TEXT [--remote] [--print]`
// Operator-run recovery for an organisation whose only owner lost their identity-provider subject
// (spec 5.2; docs/roles.md). Adds the new subject as owner and records who approved it in the
// organisation's history, in one `wrangler d1 execute` against the control plane's database.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { recoverySql } from "./recovery-sql.mjs";

const { values } = parseArgs({
  options: {
    org: { type: "string" },
    subject: { type: "string" },
    "approved-by": { type: "string" },
    reason: { type: "string" },
    remote: { type: "boolean", default: false },
    print: { type: "boolean", default: false },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(
    "usage: npm run recover-owner -- --org ORG --subject NEW_SUBJECT --approved-by OPERATOR --reason TEXT [--remote] [--print]",
  );
  process.exit(0);
}
let statements;
try {
  statements = recoverySql({
    organisation: values.org,
    subject: values.subject,
    approvedBy: values["approved-by"],
    reason: values.reason,
  });
} catch (error) {
  console.error(error.message);
  process.exit(64);
}
const sql = statements.join("\n");
if (values.print) {
  console.log(sql);
  process.exit(0);
}
const config = join(import.meta.dirname, "..", "workers", "control", "wrangler.toml");
const result = spawnSync(
  "wrangler",
  ["d1", "execute", "DB", "--config", config, values.remote ? "--remote" : "--local", "--command", sql],
  { stdio: "inherit" },
);
process.exit(result.status ?? 1);
