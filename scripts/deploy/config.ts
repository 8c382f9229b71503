// Settings to wrangler configuration: the committed wrangler.toml files stay the source of every
// binding and knob; this step renames what must differ per environment (Worker names, resource
// names, rate-limit namespaces), fills in the operator's values and the resolved resource ids, and
// writes JSON configs into the git-ignored .deploy/<environment>/ folder.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parse } from "smol-toml";
import { queueNames, queueRole } from "../../workers/control/src/queues.ts";
import type { EnvironmentSettings } from "./settings.ts";

export type WorkerConfig = Record<string, unknown> & {
  name: string;
  main: string;
  vars?: Record<string, string>;
};

/** The two Workers the service deploys, resolver first (the control plane binds to it). */
export type Configs = { resolver: WorkerConfig; control: WorkerConfig };

/** Ids found or created by the deploy, D1's by binding; absent in a dry run. */
export type ResolvedIds = { kvNamespaceId?: string; d1DatabaseIds?: Record<string, string> };

/** Secrets the control plane cannot run without; declared so wrangler refuses a deploy lacking one. */
export const CONTROL_SECRETS = [
  "SIGNING_KEY",
  "LOG_SIGNING_KEY",
  "NOTIFICATION_SIGNING_KEY",
  "MARKETPLACE_AWS_ACCESS_KEY_ID",
  "MARKETPLACE_AWS_SECRET_ACCESS_KEY",
  "MARKETPLACE_TOKEN_HASH_KEY",
  "MARKETPLACE_TOKEN_ENCRYPTION_KEY",
  "MARKETPLACE_EVENTS_SECRET",
] as const;

export const PRODUCTION = "production";

/** The transparency log's origin line and key name (docs/transparency-log.md). */
export const logOrigin = (resolverDomain: string): string => `${resolverDomain}/log`;

/** A name for this environment: production keeps the base name, any other gets a suffix. */
function nameIn(environment: string, base: string): string {
  return environment === PRODUCTION ? base : `${base}-${environment}`;
}

/** The queues' names come from the rule the control plane routes its batches by. */
function deployedQueueNames(environment: string) {
  const names = queueNames(environmentSuffix(environment));
  return {
    queue: names.acquisitions,
    deadLetterQueue: names.deadLetter,
    bindingChecksQueue: names.bindingChecks,
    notificationsQueue: names.notifications,
    notificationsDeadLetterQueue: names.notificationsDeadLetter,
  };
}

/** What `queueNames` takes for an environment: production keeps the base names. */
const environmentSuffix = (environment: string) => (environment === PRODUCTION ? undefined : environment);

/** The binding of shard `n`, in the order D1_SHARDS lists them: shard 0 is `DB`, the database from before sharding. */
const shardBinding = (n: number): string => (n === 0 ? "DB" : `DB_SHARD_${n}`);

/** The control plane's directory database's binding (docs/sharding.md). */
const DIRECTORY_BINDING = "DIRECTORY";

/** One of the control plane's D1 databases in an environment: its binding and its name in the account. */
export type DeployedDatabase = { binding: string; name: string };

/**
 * The control plane's D1 databases in an environment of `shards` shards: the shards in order,
 * then the directory. Shard 0 keeps the name the service's one database had before sharding, so
 * an environment deployed before sharding keeps its data in shard 0.
 */
export function d1Databases(environment: string, shards: number): DeployedDatabase[] {
  return [
    ...Array.from({ length: shards }, (_, n) => ({
      binding: shardBinding(n),
      name: nameIn(environment, n === 0 ? "passport" : `passport-shard-${n}`),
    })),
    { binding: DIRECTORY_BINDING, name: nameIn(environment, "passport-directory") },
  ];
}

/** The shard number of a database `d1Databases` names as a shard of `environment`, else undefined. */
export function shardNumberOf(environment: string, databaseName: string): number | undefined {
  if (databaseName === nameIn(environment, "passport")) return 0;
  const suffix = environment === PRODUCTION ? "" : `-${environment}`;
  const match = /^passport-shard-(\d+)(.*)$/.exec(databaseName);
  return match && match[2] === suffix ? Number(match[1]) : undefined;
}

/** Resource names per environment: staging never sees production's resources. */
export function resourceNames(environment: string) {
  return {
    resolver: nameIn(environment, "passport-resolver"),
    control: nameIn(environment, "passport-control"),
    kv: nameIn(environment, "passport-snapshots"),
    d1: nameIn(environment, "passport"),
    ...deployedQueueNames(environment),
  };
}

type Raw = Record<string, unknown>;

function readToml(file: string): Raw {
  return parse(readFileSync(file, "utf8")) as Raw;
}

/** The committed configs as wrangler would read them for production (no environment section). */
export function committedConfigs(root: string): Configs {
  const resolver = readToml(join(root, "wrangler.toml"));
  const control = readToml(join(root, "workers", "control", "wrangler.toml"));
  return {
    resolver: absolutePaths(withoutEnvs(resolver), root) as WorkerConfig,
    control: absolutePaths(withoutEnvs(control), join(root, "workers", "control")) as WorkerConfig,
  };
}

/** The development environment's control-plane Worker name, as committed. */
export function committedDevelopmentName(root: string): string | undefined {
  const control = readToml(join(root, "workers", "control", "wrangler.toml"));
  const envs = control.env as Record<string, Raw> | undefined;
  return envs?.development?.name as string | undefined;
}

function withoutEnvs({ env: _env, dev: _dev, ...config }: Raw): Raw {
  return config;
}

// Paths in a wrangler config are relative to the config file; the generated file lives elsewhere.
function absolutePaths(config: Raw, base: string): Raw {
  const out: Raw = { ...config, main: resolve(base, config.main as string) };
  if (Array.isArray(config.d1_databases)) {
    out.d1_databases = (config.d1_databases as Raw[]).map((db) =>
      db.migrations_dir ? { ...db, migrations_dir: resolve(base, db.migrations_dir as string) } : db,
    );
  }
  if (config.assets) {
    const assets = config.assets as Raw;
    out.assets = { ...assets, directory: resolve(base, assets.directory as string) };
  }
  return out;
}

/** The production-shaped configs for one environment of the operator's settings. */
export function generateConfigs(
  committed: Configs,
  environment: string,
  settings: EnvironmentSettings,
  ids: ResolvedIds = {},
): Configs {
  const names = resourceNames(environment);
  const resolverUrl = `https://${settings.resolverDomain}`;
  const controlUrl = `https://${settings.controlDomain}`;
  const kv = { binding: "SNAPSHOTS", ...(ids.kvNamespaceId ? { id: ids.kvNamespaceId } : {}) };
  const common = { account_id: settings.accountId, workers_dev: false, preview_urls: false };

  const resolver: WorkerConfig = {
    ...committed.resolver,
    ...common,
    name: names.resolver,
    kv_namespaces: [kv],
    ratelimits: offsetRateLimits(committed.resolver.ratelimits, settings.rateLimitNamespaceOffset),
    // The status route asks this environment's control plane's publication sequencers.
    ...withControlScript(committed.resolver.durable_objects, names.control),
    routes: [{ pattern: settings.resolverDomain, custom_domain: true }],
    vars: {
      ...committed.resolver.vars,
      ...settings.resolverVars,
      PUBLIC_BASE_URL: resolverUrl,
      DASHBOARD_BASE_URL: controlUrl,
      SIGNING_JWKS: JSON.stringify(settings.signingJwks),
      LOG_VERIFIER_KEY: settings.logVerifierKey,
    },
  };

  const queues = committed.control.queues as { producers: Raw[]; consumers: Raw[] };
  // The committed configs name production's queues; each becomes this environment's queue of its role.
  const environmentQueues = queueNames(environmentSuffix(environment));
  const queueName = (name: unknown) => {
    const role = queueRole(name as string);
    return role ? environmentQueues[role] : (name as string);
  };
  const control: WorkerConfig = {
    ...committed.control,
    ...common,
    name: names.control,
    kv_namespaces: [kv],
    d1_databases: d1Databases(environment, settings.shards).map(({ binding, name }) => {
      // Every shard is bound as the committed `DB` is (its migrations), the directory as committed.
      const { database_id: _placeholder, ...rest } = committedDatabase(
        committed.control,
        binding === DIRECTORY_BINDING ? DIRECTORY_BINDING : shardBinding(0),
      );
      const id = ids.d1DatabaseIds?.[binding];
      return { ...rest, binding, database_name: name, ...(id ? { database_id: id } : {}) };
    }),
    services: (committed.control.services as Raw[]).map((service) =>
      service.service === "passport-resolver" ? { ...service, service: names.resolver } : service,
    ),
    queues: {
      producers: queues.producers.map((p) => ({ ...p, queue: queueName(p.queue) })),
      consumers: queues.consumers.map((c) => ({
        ...c,
        queue: queueName(c.queue),
        ...(c.dead_letter_queue ? { dead_letter_queue: queueName(c.dead_letter_queue) } : {}),
      })),
    },
    ratelimits: offsetRateLimits(committed.control.ratelimits, settings.rateLimitNamespaceOffset),
    routes: [{ pattern: settings.controlDomain, custom_domain: true }],
    secrets: { required: [...CONTROL_SECRETS] },
    vars: {
      ...committed.control.vars,
      ...settings.controlVars,
      ENVIRONMENT: environment,
      RESOLVER_BASE_URL: resolverUrl,
      AUTH_ISSUER: settings.access.teamDomain,
      AUTH_AUDIENCE: settings.access.audience,
      AUTH_JWKS_URL: `${settings.access.teamDomain}/cdn-cgi/access/certs`,
      MARKETPLACE_REGION: settings.marketplace.region,
      MARKETPLACE_METERING_URL: `https://metering.marketplace.${settings.marketplace.region}.amazonaws.com/`,
      MARKETPLACE_ENTITLEMENT_URL: `https://entitlement.marketplace.${settings.marketplace.region}.amazonaws.com/`,
      MARKETPLACE_ENTITLEMENT_CHECK: settings.marketplace.entitlementCheck,
      MARKETPLACE_PRODUCT_FAMILIES: JSON.stringify(settings.marketplace.productFamilies),
      DASHBOARD_ONBOARDING_URL: `${controlUrl}/dashboard/onboarding`,
      CONTROL_BASE_URL: controlUrl,
      LOG_ORIGIN: logOrigin(settings.resolverDomain),
      D1_SHARDS: JSON.stringify(Array.from({ length: settings.shards }, (_, n) => shardBinding(n))),
    },
  };
  return { resolver, control };
}

/** A D1 binding of the committed control-plane configuration (production's section). */
function committedDatabase(control: WorkerConfig, binding: string): Raw {
  const found = ((control.d1_databases as Raw[] | undefined) ?? []).find((db) => db.binding === binding);
  if (!found) throw new Error(`workers/control/wrangler.toml binds no D1 database ${binding} for production`);
  return found;
}

/** Durable Object bindings to the control plane's classes, pointed at this environment's control plane. */
function withControlScript(durableObjects: unknown, control: string): Raw {
  const bindings = (durableObjects as { bindings?: Raw[] } | undefined)?.bindings;
  if (!bindings) return {};
  return {
    durable_objects: {
      bindings: bindings.map((b) => (b.script_name === "passport-control" ? { ...b, script_name: control } : b)),
    },
  };
}

function offsetRateLimits(limits: unknown, offset: number): Raw[] {
  return ((limits as Raw[] | undefined) ?? []).map((limit) => ({
    ...limit,
    namespace_id: String(Number(limit.namespace_id) + offset),
  }));
}

/**
 * The control plane as a first deploy uploads it: without its service binding to the resolver.
 * The resolver binds the control plane's PublicationSequencer (`script_name`) and the control plane
 * binds the resolver (`RESOLVER`); Cloudflare refuses a binding to a script that does not exist
 * yet, so on an empty environment one of the two must go first without its binding
 * (docs/deploy.md, step 7). Without RESOLVER a publication fails and stays in the outbox, which
 * harms nothing before the first passport exists.
 */
export function firstControlConfig(control: WorkerConfig, resolverName: string): WorkerConfig {
  return {
    ...control,
    services: ((control.services as Raw[] | undefined) ?? []).filter((service) => service.service !== resolverName),
  };
}

export type ConfigFiles = { resolver: string; control: string; controlFirst: string };

/**
 * Writes the configs as <dir>/resolver.json, <dir>/control.json and <dir>/control-first.json
 * (firstControlConfig), paths relative to <dir>.
 */
export function writeConfigs(configs: Configs, dir: string, environment: string): ConfigFiles {
  mkdirSync(dir, { recursive: true });
  const files = {
    resolver: join(dir, "resolver.json"),
    control: join(dir, "control.json"),
    controlFirst: join(dir, "control-first.json"),
  };
  const all = { ...configs, controlFirst: firstControlConfig(configs.control, resourceNames(environment).resolver) };
  for (const which of ["resolver", "control", "controlFirst"] as const) {
    writeFileSync(files[which], `${JSON.stringify(relativePaths(all[which], dir), null, 2)}\n`);
  }
  return files;
}

function relativePaths(config: WorkerConfig, dir: string): Raw {
  const rel = (path: string) => relative(dir, path) || ".";
  const out: Raw = { ...config, main: rel(config.main) };
  if (Array.isArray(config.d1_databases)) {
    out.d1_databases = (config.d1_databases as Raw[]).map((db) =>
      db.migrations_dir ? { ...db, migrations_dir: rel(db.migrations_dir as string) } : db,
    );
  }
  if (config.assets) {
    const assets = config.assets as Raw;
    out.assets = { ...assets, directory: rel(assets.directory as string) };
  }
  return out;
}

export const generatedDir = (root: string, environment: string) => join(root, ".deploy", environment);
