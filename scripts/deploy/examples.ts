// Values that only stand in for the operator's own (docs/deploy.md, "The settings file"): the
// example settings' account id, domains, Access application, product code and signing key, and any
// value of the same made-up shape. A copy of deploy/settings.example.json must not deploy.
import type { EnvironmentSettings } from "./settings.ts";

/** Where the operator finds each value the settings must hold, by field. */
const WHERE_TO_FIND = {
  accountId:
    "put your Cloudflare account id: dashboard, Workers & Pages overview, 'Account ID' (or `npx wrangler whoami`)",
  resolverDomain:
    "put the resolver's public host, on a domain (zone) of this Cloudflare account, e.g. id.<your domain>",
  controlDomain:
    "put the Dashboard's host, on a domain (zone) of this Cloudflare account and behind Access, e.g. passport.<your domain>",
  "access.teamDomain": "put https://<your team>.cloudflareaccess.com: Zero Trust dashboard, Settings, 'Team domain'",
  "access.audience":
    "put the Access application's AUD tag: Zero Trust dashboard, Access, Applications, the Dashboard's application, 'Application Audience (AUD) Tag'",
  "marketplace.region": "put the AWS region of your listing's Metering and Entitlement endpoints, e.g. us-east-1",
  "marketplace.productFamilies":
    "put your listing's product codes, each to its passport family: AWS Marketplace Management Portal, Products, SaaS, 'Product code'",
  "marketplace.entitlementCheck":
    'put "get-entitlements" for a contract listing, "subscription" for a subscription (with allowSubscriptionOnly)',
  signingJwks:
    "keep no example key: the first deploy makes the signing key and adds its public half here (or add your own public key: `npm run keys -- rotate`)",
  rateLimitNamespaceOffset:
    "put 0 for production, 10000 for staging, another multiple of 10000 per further environment",
} as const;
type SettingsField = keyof typeof WHERE_TO_FIND;

/** RFC 2606 and RFC 6761 names: they never reach a service of yours. */
const RESERVED_DOMAIN = /(^|\.)(example\.(com|net|org)|example|test|invalid|localhost|local)$/;
/** Access team names that stand in for the operator's. */
const PLACEHOLDER_TEAMS = new Set([
  "example",
  "team",
  "your-team",
  "yourteam",
  "my-team",
  "myteam",
  "test",
  "changeme",
  "placeholder",
]);
/** Runs of ascending letters and digits that no real product code holds. */
const MADE_UP_PRODUCT_CODE = /a1b2c3|abcdef|123456|example|xxxx/;
/** The public halves of keys whose private halves are published (RFC 7515 A.3, the example key). */
const PUBLISHED_KEYS = new Set(["f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"]);

/**
 * Why a hex identifier (account id, Access AUD tag) is made up, or undefined when it looks issued:
 * issued ones are random, so a run of eight consecutive digits, a repeated short pattern or a
 * handful of distinct digits is, by chance, rarer than one in ten million.
 */
export function madeUpHex(value: string): string | undefined {
  const digits = [...value].map((c) => Number.parseInt(c, 16));
  let up = 1;
  let down = 1;
  for (let i = 1; i < digits.length; i++) {
    const step = ((digits[i] ?? 0) - (digits[i - 1] ?? 0) + 16) % 16;
    up = step === 1 ? up + 1 : 1;
    down = step === 15 ? down + 1 : 1;
    if (up >= 8 || down >= 8) return "a run of consecutive hex digits";
  }
  for (let period = 1; period <= value.length / 2; period++) {
    if (value.length % period === 0 && value.slice(0, period).repeat(value.length / period) === value) {
      return `a ${period}-digit pattern repeated`;
    }
  }
  if (new Set(value).size <= 4) return "too few distinct digits";
  return undefined;
}

/**
 * One line per value of the environment's settings that is an example, not the operator's own:
 * the settings field, what is wrong, and where to find the right value.
 */
export function exampleValues(environment: string, settings: EnvironmentSettings): string[] {
  const problems: string[] = [];
  const refuse = (field: SettingsField, path: string, why: string) =>
    problems.push(`environments.${environment}.${path}: ${why}; ${WHERE_TO_FIND[field]}`);

  const account = madeUpHex(settings.accountId);
  if (account) refuse("accountId", "accountId", `"${settings.accountId}" is made up (${account})`);
  for (const field of ["resolverDomain", "controlDomain"] as const) {
    const host = settings[field];
    if (RESERVED_DOMAIN.test(host)) refuse(field, field, `"${host}" is a reserved example domain`);
  }
  const team = new URL(settings.access.teamDomain).hostname.split(".")[0] ?? "";
  if (PLACEHOLDER_TEAMS.has(team)) {
    refuse("access.teamDomain", "access.teamDomain", `"${settings.access.teamDomain}" is an example team`);
  }
  const audience = madeUpHex(settings.access.audience);
  if (audience) refuse("access.audience", "access.audience", `"${settings.access.audience}" is made up (${audience})`);
  for (const code of Object.keys(settings.marketplace.productFamilies)) {
    if (MADE_UP_PRODUCT_CODE.test(code)) {
      refuse("marketplace.productFamilies", "marketplace.productFamilies", `"${code}" is a made-up product code`);
    }
  }
  settings.signingJwks.keys.forEach((key, index) => {
    if (typeof key.x === "string" && PUBLISHED_KEYS.has(key.x)) {
      refuse(
        "signingJwks",
        `signingJwks.keys[${index}]`,
        `"${key.kid}" is the example key, whose private half is published (RFC 7515, A.3): anyone could sign records the resolver trusts`,
      );
    }
  });
  return problems;
}

/** The lines for a deploy without any settings file: every field the operator must fill in. */
export function fieldsToFill(environment: string): string[] {
  return (Object.entries(WHERE_TO_FIND) as [SettingsField, string][]).map(
    ([field, where]) => `environments.${environment}.${field}: ${where}`,
  );
}
