// The operator's deploy settings (docs/deploy.md): one JSON file, validated here. Secrets never
// live in it; the values the service cannot make itself come from environment variables at deploy
// time (MARKETPLACE_AWS_ACCESS_KEY_ID, MARKETPLACE_AWS_SECRET_ACCESS_KEY).
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
// The record module alone: the package index would bring Web types the deploy scripts are not compiled with.
import { Family } from "../../packages/domain/src/record.ts";
import { collidesWithDeadLetterQueue } from "../../workers/control/src/queues.ts";

/** Shards a deploy creates at most: "my organisations" asks every shard at once (docs/sharding.md). */
const MAX_SHARDS = 64;

/** The committed local environment (workers/control/wrangler.toml, `ENVIRONMENT = "development"`). */
const DEVELOPMENT = "development";

const hostname = z
  .string()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "a lower-case DNS host name");

const jwk = z.looseObject({ kty: z.string(), kid: z.string().min(1) });

export const EnvironmentSettings = z.strictObject({
  /** The Cloudflare account every resource of this environment lives in. */
  accountId: z.string().regex(/^[0-9a-f]{32}$/, "the 32 hex digits of the account id"),
  /** Custom domains: the resolver's public host and the control plane's (Dashboard) host. */
  resolverDomain: hostname,
  controlDomain: hostname,
  /** The Cloudflare Access application in front of the control plane. */
  access: z.strictObject({
    teamDomain: z.url().regex(/^https:\/\/[a-z0-9-]+\.cloudflareaccess\.com$/, "https://<team>.cloudflareaccess.com"),
    audience: z.string().regex(/^[0-9a-f]{64}$/, "the Access application's AUD tag (64 hex digits)"),
  }),
  marketplace: z.strictObject({
    region: z.string().regex(/^[a-z]{2}-[a-z]+-\d$/),
    /** Product code to the passport family it grants, as in the marketplace listing. */
    productFamilies: z.record(z.string().min(1), Family),
    entitlementCheck: z.enum(["get-entitlements", "subscription"]),
    /** Must be true to deploy with entitlementCheck "subscription" (no entitlement call at all). */
    allowSubscriptionOnly: z.boolean().default(false),
  }),
  /** Public record-signing keys the resolver trusts, newest first (docs/signing.md). The deploy
   * adds the public half of a key it generates here. */
  signingJwks: z.strictObject({ keys: z.array(jwk) }).default({ keys: [] }),
  /** The transparency log's note verifier key (`<resolver domain>/log+<hash>+<key>`), served at
   * /log/key (docs/transparency-log.md). The deploy fills it in when it makes LOG_SIGNING_KEY. */
  logVerifierKey: z.string().default(""),
  /**
   * How many D1 databases hold the control plane's organisations (docs/sharding.md): 1 is the
   * database from before sharding alone. Raising it adds a shard at the next deploy; lowering it
   * is refused, since the organisations placed in a shard would be out of the service's reach.
   */
  shards: z.number().int().min(1).max(MAX_SHARDS).default(1),
  /** Added to every rate-limit namespace id so environments never share counters. */
  rateLimitNamespaceOffset: z.number().int().min(0).max(900_000).multipleOf(10_000),
  /** Further variables for either Worker, carried into the generated configuration as given. */
  resolverVars: z.record(z.string(), z.string()).default({}),
  controlVars: z.record(z.string(), z.string()).default({}),
});
export type EnvironmentSettings = z.infer<typeof EnvironmentSettings>;

export const DeploySettings = z.strictObject({
  $schema: z.string().optional(),
  environments: z.record(
    z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,20}$/, "lower-case letters, digits and hyphens, starting with a letter, at most 21")
      .refine(
        (name) => !collidesWithDeadLetterQueue(name),
        "may not end in dlq: its acquisitions queue would have another environment's dead-letter queue's name",
      )
      .refine(
        (name) => !/^(directory|shard-\d+)(-|$)/.test(name),
        "may not start with directory or shard-<n>: its D1 database would have the name of another environment's directory or shard",
      )
      .refine(
        (name) => name !== DEVELOPMENT,
        "development is the local environment (npm start), whose control plane trusts development tokens; name a deployed environment otherwise",
      ),
    EnvironmentSettings,
  ),
});
export type DeploySettings = z.infer<typeof DeploySettings>;

/** Parses a settings file's text; throws one line per invalid field. */
export function parseSettings(text: string, source: string): DeploySettings {
  const result = DeploySettings.safeParse(JSON.parse(text));
  if (result.success) return result.data;
  const lines = result.error.issues.flatMap((issue) => {
    // A refused environment name is one issue whose own issues say why; name those.
    const messages = issue.code === "invalid_key" ? issue.issues.map((inner) => inner.message) : [issue.message];
    return messages.map((message) => `${source}: ${issue.path.join(".") || "(root)"}: ${message}`);
  });
  throw new SettingsError(lines);
}

export function readSettings(file: string): DeploySettings {
  return parseSettings(readFileSync(file, "utf8"), file);
}

export class SettingsError extends Error {
  readonly lines: string[];
  constructor(lines: string[]) {
    super(lines.join("\n"));
    this.lines = lines;
  }
}

/** The settings file when neither --settings nor DEPLOY_SETTINGS names one. */
export const DEFAULT_SETTINGS = "deploy/settings.json";

/**
 * The settings file a command reads, and every place it looked. An absolute path is taken as is; a
 * relative one is looked up from the directory the command was started in (`callerDir`: `npm
 * run` starts scripts in the repository root), then from the repository root.
 */
export function locateSettings(
  given: string | undefined,
  { root, callerDir }: { root: string; callerDir: string },
): { file: string; lookedAt: string[] } {
  if (!given) return { file: join(root, DEFAULT_SETTINGS), lookedAt: [join(root, DEFAULT_SETTINGS)] };
  if (isAbsolute(given)) return { file: given, lookedAt: [given] };
  const lookedAt = [...new Set([resolve(callerDir, given), resolve(root, given)])];
  return { file: lookedAt.find((file) => existsSync(file)) ?? (lookedAt[0] as string), lookedAt };
}

/** Where the person ran the command: scripts/run.mjs passes it on, as pnpm resets INIT_CWD. */
export const callerDir = (): string => process.env.PASSPORT_CALLER_DIR || process.env.INIT_CWD || process.cwd();
