// The deploy's network steps, in order, each idempotent: find or create the resources, apply the
// migrations remotely, deploy the Workers in the order `workerDeploys` gives (each binds the other,
// so a first deploy uploads the control plane once without its resolver binding), handing missing
// secrets to wrangler with the first control-plane upload, then a smoke check. Every call
// goes through `run` (wrangler's CLI) or `fetch`, so tests drive the whole sequence with fakes.
import { randomBytes } from "node:crypto";
import { logKeyPair, signingKeyPair } from "../dev-keys.mjs";
import type { ConfigFiles, DeployedDatabase, ResolvedIds } from "./config.ts";
import { CONTROL_SECRETS, d1Databases, logOrigin, resourceNames, shardNumberOf } from "./config.ts";
import type { EnvironmentSettings } from "./settings.ts";

type Jwks = EnvironmentSettings["signingJwks"];
type Jwk = Jwks["keys"][number];

/** Runs `wrangler <args>`; rejects with a WranglerError when wrangler exits non-zero. */
export type Runner = (args: string[]) => Promise<string>;

/** wrangler exited non-zero; `output` is what it printed on stderr (its error and API code). */
export class WranglerError extends Error {
  readonly args: string[];
  readonly exitCode: number | null;
  readonly output: string;
  constructor(args: string[], exitCode: number | null, output: string) {
    super(`wrangler ${args.slice(0, 2).join(" ")} exited with ${exitCode}`);
    this.args = args;
    this.exitCode = exitCode;
    this.output = output;
  }
}

/** Cloudflare's answer for a Worker that does not exist (workers.api.error.script_not_found). */
const SCRIPT_NOT_FOUND = /\[code: 10007\]|script_not_found/;

export type DeployContext = {
  environment: string;
  /** The settings' shard count (docs/sharding.md): the deploy creates and migrates each shard and the directory. */
  shards: number;
  run: Runner;
  fetch: typeof fetch;
  /** Writes the generated configs with the given ids and public keys; returns their file paths. */
  writeConfigs: (ids: ResolvedIds, signingJwks: Jwks, logVerifierKey: string) => ConfigFiles;
  /** Writes secrets to a private temporary file for `--secrets-file`; returns it and a remover. */
  secretsFile: (secrets: Record<string, string>) => { path: string; remove: () => void };
  /** Values read from the environment: the AWS credentials (required), the events secret (optional). */
  providedSecrets: Record<string, string | undefined>;
  signingJwks: Jwks;
  /** Keeps the key set for the next deploy, called before anything is deployed with a new key. */
  keepSigningJwks: (jwks: Jwks) => void;
  /** The transparency log's verifier key from the settings ("" before the log key is made). */
  logVerifierKey: string;
  /** Keeps a newly made log verifier key in the settings, before anything is deployed with it. */
  keepLogVerifierKey: (verifierKey: string) => void;
  /** The environment's public URLs, from its custom domains. */
  urls: { resolver: string; control: string };
  log: (line: string) => void;
};

export type DeployResult = {
  resolverUrl: string;
  controlUrl: string;
  newSigningKey?: Jwk;
  /** The public half of a change-notification key the deploy made (docs/events.md), now in the key set. */
  newNotificationKey?: Jwk;
  newLogVerifierKey?: string;
};

async function findOrCreateResources(ctx: DeployContext): Promise<ResolvedIds> {
  const names = resourceNames(ctx.environment);
  const kvId = async () =>
    (JSON.parse(await ctx.run(["kv", "namespace", "list"])) as { id: string; title: string }[]).find(
      (ns) => ns.title === names.kv,
    )?.id;
  let kvNamespaceId = await kvId();
  if (!kvNamespaceId) {
    ctx.log(`creating KV namespace ${names.kv}`);
    await ctx.run(["kv", "namespace", "create", names.kv]);
    kvNamespaceId = await kvId();
  } else ctx.log(`KV namespace ${names.kv} exists`);

  const d1DatabaseIds = await findOrCreateDatabases(ctx);

  for (const queue of [
    names.queue,
    names.deadLetterQueue,
    names.bindingChecksQueue,
    names.notificationsQueue,
    names.notificationsDeadLetterQueue,
  ]) {
    try {
      await ctx.run(["queues", "info", queue]);
      ctx.log(`queue ${queue} exists`);
    } catch {
      ctx.log(`creating queue ${queue}`);
      await ctx.run(["queues", "create", queue]);
    }
  }
  if (!kvNamespaceId) throw new Error("a created resource did not appear in wrangler's list");
  return { kvNamespaceId, d1DatabaseIds };
}

/**
 * The control plane's D1 databases (every shard and the directory), found or created, by binding.
 * A shard of this environment that the settings no longer count stops the deploy before anything
 * is created: the organisations placed in it would be out of the service's reach.
 */
async function findOrCreateDatabases(ctx: DeployContext): Promise<Record<string, string>> {
  const wanted = d1Databases(ctx.environment, ctx.shards);
  const list = async () => JSON.parse(await ctx.run(["d1", "list", "--json"])) as { uuid: string; name: string }[];
  let listed = await list();
  const dropped = listed
    .map((db) => ({ name: db.name, shard: shardNumberOf(ctx.environment, db.name) ?? -1 }))
    .filter(({ shard }) => shard >= ctx.shards);
  if (dropped.length) {
    throw new Error(
      `the settings count ${ctx.shards} shard(s), but the account has ${dropped.map((d) => `${d.name} (shard ${d.shard})`).join(", ")}: a shard cannot be removed, as the organisations placed in it would be out of reach; set shards to at least ${Math.max(...dropped.map((d) => d.shard)) + 1} (docs/sharding.md)`,
    );
  }
  const idOf = (db: DeployedDatabase) => listed.find((found) => found.name === db.name)?.uuid;
  const missing = wanted.filter((db) => !idOf(db));
  for (const db of wanted) {
    if (missing.includes(db)) {
      ctx.log(`creating D1 database ${db.name} (${db.binding})`);
      await ctx.run(["d1", "create", db.name]);
    } else ctx.log(`D1 database ${db.name} (${db.binding}) exists`);
  }
  if (missing.length) listed = await list();
  const ids: Record<string, string> = {};
  for (const db of wanted) {
    const id = idOf(db);
    if (!id) throw new Error(`D1 database ${db.name} was created but did not appear in wrangler's list`);
    ids[db.binding] = id;
  }
  return ids;
}

/**
 * Secret names the deployed control plane already has, or undefined when Cloudflare answers that
 * the control plane does not exist yet (before its first deploy). Any other failure (network,
 * rate limit, authentication) stops the deploy: taken for a first deploy, it would make new
 * signing, log and token keys and replace the ones the running service uses.
 */
async function existingSecrets(ctx: DeployContext, controlConfig: string): Promise<Set<string> | undefined> {
  let listed: string;
  try {
    listed = await ctx.run(["secret", "list", "--format", "json", "-c", controlConfig]);
  } catch (error) {
    if (error instanceof WranglerError && SCRIPT_NOT_FOUND.test(error.output)) return undefined;
    throw new Error(
      `could not list the control plane's secrets (${error instanceof Error ? error.message : String(error)}), so this deploy cannot tell a first deploy from an upgrade; nothing was deployed, run it again`,
    );
  }
  return new Set((JSON.parse(listed) as { name: string }[]).map((secret) => secret.name));
}

/** One Worker upload: `controlFirst` is the control plane without its RESOLVER binding. */
export type WorkerDeploy = keyof ConfigFiles;

/**
 * The order of the Worker uploads. The resolver binds the control plane's PublicationSequencer
 * (`script_name`) and the control plane binds the resolver (`RESOLVER`), and Cloudflare refuses a
 * binding to a script or class that does not exist. So a first deploy uploads the control plane
 * without RESOLVER (which creates its Durable Object classes), then the resolver, then the control
 * plane with it. Later deploys upload the resolver, then the control plane, as both exist.
 */
export function workerDeploys(controlPlaneExists: boolean): WorkerDeploy[] {
  return controlPlaneExists ? ["resolver", "control"] : ["controlFirst", "resolver", "control"];
}

/**
 * The plan main.ts prints before a dry run or a deploy. Whether the control plane exists is known
 * only from the account, so the first deploy's extra upload is named as such.
 */
export function planLines(
  names: {
    kv: string;
    queue: string;
    deadLetterQueue: string;
    bindingChecksQueue: string;
    notificationsQueue: string;
    notificationsDeadLetterQueue: string;
    resolver: string;
    control: string;
  },
  urls: { resolver: string; control: string },
  configDir: string,
  databases: DeployedDatabase[],
): string[] {
  const listed = (items: string[]) =>
    items.length > 1 ? `${items.slice(0, -1).join(", ")} and ${items.at(-1)}` : (items[0] ?? "");
  const upload: Record<WorkerDeploy, string> = {
    controlFirst: `on a first deploy only (no ${names.control} yet): deploy ${names.control} without its RESOLVER binding, with its secrets, so the resolver's binding to its PublicationSequencer has a class to bind`,
    resolver: `deploy ${names.resolver} on ${urls.resolver}`,
    control: `deploy ${names.control} on ${urls.control}, with any missing secret (generated or from the environment)`,
  };
  const lines = [
    `find or create KV ${names.kv}, D1 ${listed(databases.map((db) => `${db.name} (${db.binding})`))}, queues ${names.queue}, ${names.deadLetterQueue}, ${names.bindingChecksQueue}, ${names.notificationsQueue} and ${names.notificationsDeadLetterQueue}`,
    `write configuration to ${configDir}/ and apply D1 migrations remotely to ${listed(databases.map((db) => db.binding))}`,
    ...workerDeploys(false).map((step) => upload[step]),
    `smoke check ${urls.resolver}/health and /.well-known/jwks.json`,
  ];
  return lines.map((line, index) => `${index + 1}. ${line}`);
}

const generatedKey = () => randomBytes(32).toString("base64");

export async function deploy(ctx: DeployContext): Promise<DeployResult> {
  const ids = await findOrCreateResources(ctx);
  let files = ctx.writeConfigs(ids, ctx.signingJwks, ctx.logVerifierKey);
  const listed = await existingSecrets(ctx, files.control);
  const have = listed ?? new Set<string>();
  if (have.has("SIGNING_KEY") && ctx.signingJwks.keys.length === 0) {
    throw new Error(
      "secret SIGNING_KEY is set but the settings' signingJwks has no key: put its public half in the settings (docs/signing.md)",
    );
  }
  if (have.has("LOG_SIGNING_KEY") && !ctx.logVerifierKey) {
    throw new Error(
      "secret LOG_SIGNING_KEY is set but the settings have no logVerifierKey: put the log's verifier key in the settings (docs/transparency-log.md)",
    );
  }

  const unavailable = CONTROL_SECRETS.filter(
    (name) => name.startsWith("MARKETPLACE_AWS_") && !have.has(name) && !ctx.providedSecrets[name],
  );
  if (unavailable.length) {
    throw new Error(
      unavailable.map((name) => `secret ${name} is not set on the control plane and not in the environment`).join("\n"),
    );
  }
  const missing: Record<string, string> = {};
  let signingJwks = ctx.signingJwks;
  let newSigningKey: Jwk | undefined;
  let newNotificationKey: Jwk | undefined;
  let logVerifierKey = ctx.logVerifierKey;
  for (const name of CONTROL_SECRETS) {
    if (have.has(name)) continue;
    if (name === "LOG_SIGNING_KEY") {
      const pair = await logKeyPair(logOrigin(new URL(ctx.urls.resolver).host));
      missing.LOG_SIGNING_KEY = pair.privateJwk;
      logVerifierKey = pair.verifierKey;
      continue;
    }
    if (name === "NOTIFICATION_SIGNING_KEY") {
      // Change notifications are signed with Ed25519 (docs/events.md); receivers verify them
      // against the same published key set as records, where the public half goes last.
      const kid = `ntf-${new Date().toISOString().slice(0, 10)}-${randomBytes(3).toString("hex")}`;
      const pair = await signingKeyPair("EdDSA", kid);
      missing.NOTIFICATION_SIGNING_KEY = pair.privateJwk;
      newNotificationKey = JSON.parse(pair.publicJwk) as Jwk;
      continue;
    }
    if (name === "SIGNING_KEY") {
      const kid = `rec-${new Date().toISOString().slice(0, 10)}-${randomBytes(3).toString("hex")}`;
      const pair = await signingKeyPair("ES256", kid);
      missing.SIGNING_KEY = pair.privateJwk;
      const publicJwk: Jwk = JSON.parse(pair.publicJwk);
      newSigningKey = publicJwk;
      signingJwks = { keys: [publicJwk, ...signingJwks.keys] };
    } else if (name.startsWith("MARKETPLACE_AWS_")) {
      missing[name] = ctx.providedSecrets[name] ?? "";
    } else missing[name] = ctx.providedSecrets[name] || generatedKey();
  }
  if (newNotificationKey) signingJwks = { keys: [...signingJwks.keys, newNotificationKey] };
  if (newSigningKey || newNotificationKey) ctx.keepSigningJwks(signingJwks);
  if (logVerifierKey !== ctx.logVerifierKey) ctx.keepLogVerifierKey(logVerifierKey);
  if (newSigningKey || newNotificationKey || logVerifierKey !== ctx.logVerifierKey)
    files = ctx.writeConfigs(ids, signingJwks, logVerifierKey);
  ctx.log(`secrets to set: ${Object.keys(missing).join(", ") || "none"} (values never printed)`);

  // Every shard gets the same migrations, the directory its own (each binding's migrations_dir);
  // wrangler applies only those a database has not had, so a new shard gets them all.
  for (const { binding } of d1Databases(ctx.environment, ctx.shards)) {
    ctx.log(`applying D1 migrations to ${binding} (remote)`);
    await ctx.run(["d1", "migrations", "apply", binding, "--remote", "-c", files.control]);
  }
  // Missing secrets go with the first control-plane upload; wrangler refuses one without them.
  let secretsSent = false;
  for (const step of workerDeploys(listed !== undefined)) {
    if (step === "resolver") {
      ctx.log("deploying the resolver");
      await ctx.run(["deploy", "-c", files.resolver]);
      continue;
    }
    ctx.log(
      step === "controlFirst"
        ? "deploying the control plane without its resolver binding"
        : "deploying the control plane",
    );
    const secrets = !secretsSent && Object.keys(missing).length ? ctx.secretsFile(missing) : undefined;
    try {
      await ctx.run(["deploy", "-c", files[step], ...(secrets ? ["--secrets-file", secrets.path] : [])]);
    } finally {
      secrets?.remove();
    }
    secretsSent = true;
  }
  await smokeCheck(ctx, ctx.urls.resolver);
  return {
    resolverUrl: ctx.urls.resolver,
    controlUrl: ctx.urls.control,
    newSigningKey,
    ...(newNotificationKey ? { newNotificationKey } : {}),
    ...(logVerifierKey !== ctx.logVerifierKey ? { newLogVerifierKey: logVerifierKey } : {}),
  };
}

/** The deployed resolver answers its health route and publishes a non-empty JWKS. */
async function smokeCheck(ctx: Pick<DeployContext, "fetch" | "log">, resolverUrl: string): Promise<void> {
  const health = await ctx.fetch(`${resolverUrl}/health`);
  if (!health.ok) throw new Error(`smoke check: ${resolverUrl}/health answered ${health.status}`);
  const jwksResponse = await ctx.fetch(`${resolverUrl}/.well-known/jwks.json`);
  const jwks = (jwksResponse.ok ? await jwksResponse.json() : {}) as { keys?: unknown[] };
  if (!jwks.keys?.length) throw new Error(`smoke check: ${resolverUrl}/.well-known/jwks.json has no keys`);
  ctx.log(`smoke check passed: ${resolverUrl}/health, ${jwks.keys.length} key(s) in the JWKS`);
}
