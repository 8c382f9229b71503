// `npm run token -- [--sub S] [--org O] [--role owner|admin|editor|viewer] [--ttl 12h]`
// Prints a development token for the locally running control plane.
import { parseArgs } from "node:util";
import { DEMO_ORGANISATION, signDevelopmentToken } from "./dev-auth.mjs";

const { values } = parseArgs({
  options: {
    sub: { type: "string", default: "dev-owner" },
    org: { type: "string", default: DEMO_ORGANISATION },
    role: { type: "string", default: "owner" },
    ttl: { type: "string", default: "12h" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(
    "usage: npm run token -- [--sub SUBJECT] [--org ORGANISATION] [--role owner|admin|editor|viewer] [--ttl 12h]",
  );
  process.exit(0);
}
if (!["owner", "admin", "editor", "viewer"].includes(values.role)) {
  console.error(`unknown role "${values.role}": use owner, admin, editor or viewer`);
  process.exit(64);
}
console.log(
  await signDevelopmentToken({ subject: values.sub, organisation: values.org, role: values.role, ttl: values.ttl }),
);
