import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  CONTROL_SECRETS,
  type Configs,
  committedConfigs,
  committedDevelopmentName,
  d1Databases,
  firstControlConfig,
  generateConfigs,
  type ResolvedIds,
  resourceNames,
  shardNumberOf,
} from "../../scripts/deploy/config.ts";
import { exampleValues, fieldsToFill, madeUpHex } from "../../scripts/deploy/examples.ts";
import { preflight } from "../../scripts/deploy/preflight.ts";
import { EnvironmentSettings, parseSettings, SettingsError } from "../../scripts/deploy/settings.ts";
import { type DeployContext, deploy, planLines, WranglerError, workerDeploys } from "../../scripts/deploy/steps.ts";
import { queueRole } from "../../workers/control/src/queues.ts";

const root = join(import.meta.dirname, "..", "..");
const example = parseSettings(readFileSync(join(root, "deploy", "settings.example.json"), "utf8"), "example");
// A settings file as an operator fills it in (test/tooling/fixtures/settings.realistic.json): its
// production environment after the first deploy, its staging environment before one.
const realistic = parseSettings(
  readFileSync(join(root, "test", "tooling", "fixtures", "settings.realistic.json"), "utf8"),
  "realistic",
);
function environment(name: string, from = example) {
  const settings = from.environments[name];
  if (!settings) throw new Error(`the settings have no ${name} environment`);
  return settings;
}
const production = environment("production");
const staging = environment("staging");
const committed = committedConfigs(root);

describe("preflight", () => {
  it("refuses the committed defaults with one line per problem", () => {
    const lines = preflight({ environment: "production", configs: committed });
    expect(lines).toEqual(
      expect.arrayContaining([
        "resolver: PUBLIC_BASE_URL points at this machine (http://127.0.0.1:8787)",
        "resolver: DASHBOARD_BASE_URL points at this machine (http://127.0.0.1:8788)",
        'resolver: KV namespace id "passport-snapshots" is a placeholder',
        'control: D1 database_id "passport-local" is a placeholder',
        "control: RESOLVER_BASE_URL points at a .invalid host (https://resolver.invalid)",
        "control: DASHBOARD_ONBOARDING_URL points at a .invalid host (https://dashboard.invalid/dashboard/onboarding)",
        "control: CONTROL_BASE_URL points at a .invalid host (https://dashboard.invalid)",
        "resolver: SIGNING_JWKS is an empty key set; records could not be verified",
        "control: AUTH_ISSUER is the development issuer (https://issuer.invalid/)",
        "control: MARKETPLACE_PRODUCT_FAMILIES still holds the simulator's product code prod-passport-api",
        'control: MARKETPLACE_ENTITLEMENT_CHECK is "subscription" (no entitlement call) without marketplace.allowSubscriptionOnly',
      ]),
    );
  });

  it("passes a realistic settings file's generated configuration", () => {
    const configs = generateConfigs(committed, "production", environment("production", realistic));
    expect(
      preflight({ environment: "production", configs, developmentControlName: committedDevelopmentName(root) }),
    ).toEqual([]);
  });

  it("refuses an environment whose control plane would carry the local development environment's Worker name", () => {
    const configs = generateConfigs(committed, "dev", staging, { kvNamespaceId: "kv", d1DatabaseIds: { DB: "d1" } });
    expect(
      preflight({
        environment: "dev",
        configs,
        signingKeyMadeIfMissing: true,
        developmentControlName: committedDevelopmentName(root),
      }),
    ).toEqual([
      "control: the dev environment's Worker name \"passport-control-dev\" is the local development environment's; a stray `wrangler deploy --env development` would replace it: name the environment otherwise",
    ]);
  });

  it("lets the first deploy make the signing key, unless the key already exists", () => {
    const configs = generateConfigs(committed, "staging", environment("staging", realistic));
    expect(JSON.parse(configs.resolver.vars?.SIGNING_JWKS ?? "")).toEqual({ keys: [] });
    const empty = "resolver: SIGNING_JWKS is an empty key set; records could not be verified";
    expect(preflight({ environment: "staging", configs, signingKeyMadeIfMissing: true })).toEqual([]);
    expect(preflight({ environment: "staging", configs })).toEqual([empty]);
    expect(
      preflight({
        environment: "staging",
        configs,
        signingKeyMadeIfMissing: true,
        secretsAvailable: new Set(CONTROL_SECRETS),
      }),
    ).toEqual([empty, "resolver: LOG_VERIFIER_KEY is empty; the transparency log's checkpoints could not be verified"]);
  });

  it("refuses what would break a deploy that the settings schema cannot see", () => {
    const configs = generateConfigs(committed, "production", {
      ...production,
      signingJwks: { keys: [] },
      marketplace: { ...production.marketplace, productFamilies: {}, entitlementCheck: "subscription" },
      controlVars: { DEV_AUTH_PUBLIC_JWK: "{}" },
    });
    configs.control.services = [
      ...(configs.control.services as object[]),
      { binding: "OUTBOUND_SIMULATOR", service: "passport-hosts-sim" },
    ];
    expect(
      preflight({
        environment: "production",
        configs,
        developmentControlName: "passport-control",
        secretsAvailable: new Set(["SIGNING_KEY"]),
      }),
    ).toEqual([
      "control: service binding OUTBOUND_SIMULATOR points at the simulator Worker passport-hosts-sim",
      "control: DEV_AUTH_PUBLIC_JWK (the development token key) is set outside development",
      "resolver: SIGNING_JWKS is an empty key set; records could not be verified",
      "control: MARKETPLACE_PRODUCT_FAMILIES is empty; no purchase could be fulfilled",
      'control: MARKETPLACE_ENTITLEMENT_CHECK is "subscription" (no entitlement call) without marketplace.allowSubscriptionOnly',
      'control: the development environment\'s Worker name is "passport-control", the production name',
      ...CONTROL_SECRETS.filter((s) => s !== "SIGNING_KEY").map((s) => `control: secret ${s} is missing`),
    ]);
  });

  it("refuses a log verifier key for another origin, or none once the log key exists", () => {
    const other = generateConfigs(committed, "production", {
      ...production,
      logVerifierKey: "id.staging.example.com/log+0a1b2c3d+AQID",
    });
    expect(preflight({ environment: "production", configs: other })).toEqual([
      'resolver: LOG_VERIFIER_KEY names the log "id.staging.example.com/log", but the control plane signs as LOG_ORIGIN "id.example.com/log"',
    ]);
    const none = generateConfigs(committed, "production", production);
    expect(preflight({ environment: "production", configs: none, secretsAvailable: new Set(CONTROL_SECRETS) })).toEqual(
      ["resolver: LOG_VERIFIER_KEY is empty; the transparency log's checkpoints could not be verified"],
    );
  });

  it("accepts the subscription-only check when the operator says so explicitly", () => {
    const configs = generateConfigs(committed, "production", {
      ...production,
      marketplace: { ...production.marketplace, entitlementCheck: "subscription" },
    });
    expect(preflight({ environment: "production", configs, allowSubscriptionOnly: true })).toEqual([]);
  });

  it("the committed development environment does not reuse the production Worker name", () => {
    expect(committedDevelopmentName(root)).not.toBe(committed.control.name);
  });
});

describe("example values", () => {
  it("refuses every example value of the example settings by its field, with where to find the right one", () => {
    expect(exampleValues("production", production)).toEqual([
      "environments.production.accountId: \"0123456789abcdef0123456789abcdef\" is made up (a run of consecutive hex digits); put your Cloudflare account id: dashboard, Workers & Pages overview, 'Account ID' (or `npx wrangler whoami`)",
      'environments.production.resolverDomain: "id.example.com" is a reserved example domain; put the resolver\'s public host, on a domain (zone) of this Cloudflare account, e.g. id.<your domain>',
      'environments.production.controlDomain: "passport.example.com" is a reserved example domain; put the Dashboard\'s host, on a domain (zone) of this Cloudflare account and behind Access, e.g. passport.<your domain>',
      "environments.production.access.teamDomain: \"https://example.cloudflareaccess.com\" is an example team; put https://<your team>.cloudflareaccess.com: Zero Trust dashboard, Settings, 'Team domain'",
      "environments.production.access.audience: \"8f3a0c1d2e4b5a6978c0d1e2f3a4b5c6d7e8f90123456789abcdef0123456789\" is made up (a run of consecutive hex digits); put the Access application's AUD tag: Zero Trust dashboard, Access, Applications, the Dashboard's application, 'Application Audience (AUD) Tag'",
      "environments.production.marketplace.productFamilies: \"prod-a1b2c3d4e5f6g\" is a made-up product code; put your listing's product codes, each to its passport family: AWS Marketplace Management Portal, Products, SaaS, 'Product code'",
      'environments.production.signingJwks.keys[0]: "rec-2026-11-23-example" is the example key, whose private half is published (RFC 7515, A.3): anyone could sign records the resolver trusts; keep no example key: the first deploy makes the signing key and adds its public half here (or add your own public key: `npm run keys -- rotate`)',
    ]);
    expect(exampleValues("staging", staging).map((line) => line.split(":")[0])).toEqual([
      "environments.staging.accountId",
      "environments.staging.resolverDomain",
      "environments.staging.controlDomain",
      "environments.staging.access.teamDomain",
      "environments.staging.access.audience",
      "environments.staging.marketplace.productFamilies",
      "environments.staging.signingJwks.keys[0]",
    ]);
  });

  it("passes a realistic settings file", () => {
    expect(exampleValues("production", environment("production", realistic))).toEqual([]);
    expect(exampleValues("staging", environment("staging", realistic))).toEqual([]);
  });

  it("refuses reserved domains and made-up identifiers in any shape, not only the example's", () => {
    const realProduction = environment("production", realistic);
    const fields = (settings: EnvironmentSettings) =>
      exampleValues("production", settings).map((line) => line.split(": ")[0]?.replace("environments.production.", ""));
    expect(
      fields({
        ...realProduction,
        resolverDomain: "id.acme.test",
        controlDomain: "passport.localhost",
        access: { teamDomain: "https://your-team.cloudflareaccess.com", audience: "ab".repeat(32) },
        accountId: "0".repeat(32),
      }),
    ).toEqual(["accountId", "resolverDomain", "controlDomain", "access.teamDomain", "access.audience"]);
    expect(fields({ ...realProduction, resolverDomain: "id.example.org", controlDomain: "dashboard.example" })).toEqual(
      ["resolverDomain", "controlDomain"],
    );
    expect(madeUpHex("fedcba9876543210aa17c3e590b2d4f1")).toBe("a run of consecutive hex digits");
    expect(madeUpHex("deadbeef".repeat(4))).toBe("a 8-digit pattern repeated");
    expect(madeUpHex("aabbaabbaabbaabbaabbaabbaabbabab")).toBe("too few distinct digits");
    // Issued ids are random: a thousand random-looking ones (fixed, so the test cannot flake) pass.
    for (let i = 0; i < 1000; i++) {
      const id = createHash("sha256").update(String(i)).digest("hex");
      expect(madeUpHex(id)).toBeUndefined();
      expect(madeUpHex(id.slice(0, 32))).toBeUndefined();
    }
  });

  it("without a settings file, names every field the settings must hold", () => {
    const required = (schema: z.ZodObject, prefix = ""): string[] =>
      Object.entries(schema.shape).flatMap(([key, field]) => {
        if (field instanceof z.ZodObject) return required(field, `${prefix}${key}.`);
        return field.safeParse(undefined).success ? [] : [`${prefix}${key}`];
      });
    const named = fieldsToFill("production").map((line) => line.split(": ")[0]);
    expect(named).toEqual(
      expect.arrayContaining(required(EnvironmentSettings).map((field) => `environments.production.${field}`)),
    );
  });
});

describe("settings", () => {
  it("names each invalid field on its own line", () => {
    const bad = JSON.stringify({
      environments: { production: { ...production, accountId: "acct", resolverDomain: "resolver.invalid!" } },
    });
    expect(() => parseSettings(bad, "s.json")).toThrow(SettingsError);
    try {
      parseSettings(bad, "s.json");
    } catch (error) {
      expect((error as SettingsError).lines).toEqual([
        "s.json: environments.production.accountId: the 32 hex digits of the account id",
        "s.json: environments.production.resolverDomain: a lower-case DNS host name",
      ]);
    }
  });
  it("refuses a product code mapped to anything but a passport family, as the control plane would", () => {
    const mapped = (productFamilies: Record<string, string>) =>
      JSON.stringify({
        environments: { production: { ...production, marketplace: { ...production.marketplace, productFamilies } } },
      });
    // Deployed, one such row would fail every acquisition at product mapping, the good codes' too.
    expect(() => parseSettings(mapped({ "prod-a": "api", "prod-b": "API" }), "s.json")).toThrow(
      /^s\.json: environments\.production\.marketplace\.productFamilies\.prod-b: .*"api"\|"agent"/,
    );
    expect(
      parseSettings(mapped({ "prod-a": "api", "prod-b": "agent" }), "s.json").environments.production,
    ).toBeDefined();
  });

  it("refuses the local development environment's name for a deployed one", () => {
    // Deployed as `development`, the control plane would run with ENVIRONMENT "development" and trust development tokens.
    expect(() => parseSettings(JSON.stringify({ environments: { development: production } }), "s.json")).toThrow(
      "s.json: environments.development: development is the local environment (npm start), whose control plane trusts development tokens; name a deployed environment otherwise",
    );
  });

  it("refuses an environment whose acquisitions queue would be named as a dead-letter queue", () => {
    const named = (name: string) => JSON.stringify({ environments: { [name]: production } });
    expect(() => parseSettings(named("staging-dlq"), "s.json")).toThrow(
      "s.json: environments.staging-dlq: may not end in dlq: its acquisitions queue would have another environment's dead-letter queue's name",
    );
    expect(() => parseSettings(named("dlq"), "s.json")).toThrow(SettingsError);
  });

  it("refuses an environment whose D1 databases would carry another environment's directory's or shard's name", () => {
    const named = (name: string) => JSON.stringify({ environments: { [name]: production } });
    // `directory` would name its shard 0 passport-directory, production's directory; `shard-1` production's shard 1.
    for (const name of ["directory", "shard-1", "directory-eu", "shard-2-eu"]) {
      expect(() => parseSettings(named(name), "s.json")).toThrow(
        `s.json: environments.${name}: may not start with directory or shard-<n>: its D1 database would have the name of another environment's directory or shard`,
      );
    }
    for (const name of ["shards", "directoryless"]) {
      const names = [...d1Databases(name, 2), ...d1Databases("production", 2), ...d1Databases("eu", 2)].map(
        (db) => db.name,
      );
      expect(new Set(names).size).toBe(names.length);
    }
  });

  it("counts shards from 1, and takes 1 when the settings say nothing", () => {
    const withShards = (shards: unknown) => JSON.stringify({ environments: { production: { ...production, shards } } });
    expect(parseSettings(withShards(4), "s.json").environments.production?.shards).toBe(4);
    expect(() => parseSettings(withShards(0), "s.json")).toThrow(/environments\.production\.shards/);
    expect(() => parseSettings(withShards(1.5), "s.json")).toThrow(/environments\.production\.shards/);
    const { shards: _none, ...without } = production;
    expect(
      parseSettings(JSON.stringify({ environments: { production: without } }), "s.json").environments.production
        ?.shards,
    ).toBe(1);
  });
});

describe("settings to configuration", () => {
  const prod = generateConfigs(committed, "production", production, {
    kvNamespaceId: "kv1",
    d1DatabaseIds: { DB: "d1", DIRECTORY: "dir1" },
  });
  const stage = generateConfigs(committed, "staging", staging, {
    kvNamespaceId: "kv2",
    d1DatabaseIds: { DB: "d2", DIRECTORY: "dir2" },
  });

  it("fills in the operator's domains, Access application, marketplace and resolved ids", () => {
    expect(prod.resolver).toMatchObject({
      name: "passport-resolver",
      account_id: production.accountId,
      workers_dev: false,
      kv_namespaces: [{ binding: "SNAPSHOTS", id: "kv1" }],
      routes: [{ pattern: "id.example.com", custom_domain: true }],
      vars: {
        PUBLIC_BASE_URL: "https://id.example.com",
        DASHBOARD_BASE_URL: `https://${production.controlDomain}`,
        SIGNING_JWKS: JSON.stringify(production.signingJwks),
      },
    });
    expect(prod.control).toMatchObject({
      name: "passport-control",
      d1_databases: [
        { binding: "DB", database_name: "passport", database_id: "d1", migrations_dir: join(root, "migrations") },
        {
          binding: "DIRECTORY",
          database_name: "passport-directory",
          database_id: "dir1",
          migrations_dir: join(root, "migrations", "directory"),
        },
      ],
      services: [{ binding: "RESOLVER", service: "passport-resolver", entrypoint: "ResolverAdmin" }],
      secrets: { required: [...CONTROL_SECRETS] },
      vars: {
        ENVIRONMENT: "production",
        RESOLVER_BASE_URL: "https://id.example.com",
        AUTH_ISSUER: "https://example.cloudflareaccess.com",
        AUTH_JWKS_URL: "https://example.cloudflareaccess.com/cdn-cgi/access/certs",
        AUTH_AUDIENCE: production.access.audience,
        MARKETPLACE_PRODUCT_FAMILIES: '{"prod-a1b2c3d4e5f6g":"api"}',
        MARKETPLACE_ENTITLEMENT_CHECK: "get-entitlements",
        DASHBOARD_ONBOARDING_URL: "https://passport.example.com/dashboard/onboarding",
        CONTROL_BASE_URL: "https://passport.example.com",
        ACQUISITION_RETRY_BASE_SECONDS: "2",
        D1_SHARDS: '["DB"]',
      },
    });
  });

  it("binds every shard the settings count, each with the shards' migrations, and the directory, and lists the shards in D1_SHARDS", () => {
    const three = generateConfigs(committed, "staging", { ...staging, shards: 3 });
    expect(three.control.d1_databases).toEqual([
      { binding: "DB", database_name: "passport-staging", migrations_dir: join(root, "migrations") },
      { binding: "DB_SHARD_1", database_name: "passport-shard-1-staging", migrations_dir: join(root, "migrations") },
      { binding: "DB_SHARD_2", database_name: "passport-shard-2-staging", migrations_dir: join(root, "migrations") },
      {
        binding: "DIRECTORY",
        database_name: "passport-directory-staging",
        migrations_dir: join(root, "migrations", "directory"),
      },
    ]);
    expect(three.control.vars?.D1_SHARDS).toBe('["DB","DB_SHARD_1","DB_SHARD_2"]');
    // The settings decide the shards, not a control variable that would name a database not bound.
    const overridden = generateConfigs(committed, "staging", { ...staging, controlVars: { D1_SHARDS: '["DB","X"]' } });
    expect(overridden.control.vars?.D1_SHARDS).toBe('["DB"]');
    expect(shardNumberOf("staging", "passport-shard-2-staging")).toBe(2);
    expect(shardNumberOf("staging", "passport-staging")).toBe(0);
    expect(shardNumberOf("production", "passport-shard-2-staging")).toBeUndefined();
    expect(shardNumberOf("production", "passport-shard-2")).toBe(2);
    expect(shardNumberOf("production", "passport-directory")).toBeUndefined();
  });

  it("staging shares no Worker, resource, queue or rate-limit counter with production", () => {
    const everything = (c: Configs) => [
      c.resolver.name,
      c.control.name,
      ...(JSON.stringify(c.control.queues).match(/passport-(acquisitions|binding-checks|notifications)[a-z-]*/g) ?? []),
      ...(c.control.d1_databases as { database_name: string }[]).map((db) => db.database_name),
      ...[...(c.resolver.ratelimits as object[]), ...(c.control.ratelimits as object[])].map(
        (l) => `rl-${(l as { namespace_id: string }).namespace_id}`,
      ),
      ...(c.control.services as { service: string }[]).map((s) => s.service),
    ];
    const shared = everything(stage).filter((name) => everything(prod).includes(name));
    expect(shared).toEqual([]);
    expect(stage.control.services).toEqual([
      { binding: "RESOLVER", service: "passport-resolver-staging", entrypoint: "ResolverAdmin" },
    ]);
    // The status route asks staging's own publication sequencers, never production's.
    expect(stage.resolver.durable_objects).toEqual({
      bindings: [
        { name: "PUBLICATION_SEQUENCER", class_name: "PublicationSequencer", script_name: "passport-control-staging" },
      ],
    });
  });

  it("deploys every Durable Object class of the control plane with its migration, the purge keeper included", () => {
    for (const control of [stage.control, firstControlConfig(stage.control, "passport-resolver-staging")]) {
      const bindings = (control.durable_objects as { bindings: { class_name: string }[] }).bindings;
      const migrated = (control.migrations as { new_sqlite_classes?: string[] }[]).flatMap(
        (m) => m.new_sqlite_classes ?? [],
      );
      expect(bindings.map((b) => b.class_name).sort()).toEqual([
        "PublicationSequencer",
        "PurgeBudget",
        "TransparencyLog",
      ]);
      expect([...migrated].sort()).toEqual(["PublicationSequencer", "PurgeBudget", "TransparencyLog"]);
    }
  });

  it("names every queue as the control plane routes it, the dead-letter queue included", () => {
    const routed = (c: Configs) =>
      (c.control.queues as { consumers: { queue: string; dead_letter_queue?: string }[] }).consumers.map(
        (consumer) => ({
          queue: consumer.queue,
          role: queueRole(consumer.queue),
          ...(consumer.dead_letter_queue ? { deadLetters: queueRole(consumer.dead_letter_queue) } : {}),
        }),
      );
    expect(routed(stage)).toEqual([
      { queue: "passport-acquisitions-staging", role: "acquisitions", deadLetters: "deadLetter" },
      { queue: "passport-acquisitions-staging-dlq", role: "deadLetter" },
      { queue: "passport-binding-checks-staging", role: "bindingChecks" },
      {
        queue: "passport-notifications-staging",
        role: "notifications",
        deadLetters: "notificationsDeadLetter",
      },
      { queue: "passport-notifications-staging-dlq", role: "notificationsDeadLetter" },
    ]);
    expect(routed(prod).map(({ role, deadLetters }) => ({ role, deadLetters }))).toEqual(
      routed(stage).map(({ role, deadLetters }) => ({ role, deadLetters })),
    );
  });

  it("carries variables it does not know through, and the operator's own", () => {
    const withExtra = {
      ...committed,
      control: { ...committed.control, vars: { ...committed.control.vars, TRUSTED_EVIDENCE_SOURCES: "[]" } },
    };
    const configs = generateConfigs(withExtra, "production", {
      ...production,
      controlVars: { DOH_ENDPOINT: "https://dns.example/q" },
    });
    expect(configs.control.vars).toMatchObject({
      TRUSTED_EVIDENCE_SOURCES: "[]",
      DOH_ENDPOINT: "https://dns.example/q",
    });
  });
});

/** A recording stand-in for wrangler's CLI that keeps its own account state between runs. */
function fakeAccount() {
  const state = {
    kv: [] as { id: string; title: string }[],
    d1: [] as { uuid: string; name: string }[],
    queues: new Set<string>(),
    secrets: new Set<string>(),
    controlDeployed: false,
    resolverDeployed: false,
    logVerifierKey: "",
  };
  const calls: string[] = [];
  let listingFails = false;
  const secretFiles: Record<string, string>[] = [];
  const kept: DeployContext["signingJwks"][] = [];
  const run = async (args: string[]) => {
    calls.push(args.join(" "));
    const [a, b, c] = args;
    if (a === "kv" && c === "list") return JSON.stringify(state.kv);
    if (a === "kv" && c === "create") state.kv.push({ id: `kv-${state.kv.length}`, title: String(args[3]) });
    else if (a === "d1" && b === "list") return JSON.stringify(state.d1);
    else if (a === "d1" && b === "create") state.d1.push({ uuid: `d1-${state.d1.length}`, name: String(c) });
    else if (a === "queues" && b === "info" && !state.queues.has(String(c))) throw new Error("not found");
    else if (a === "queues" && b === "create") state.queues.add(String(c));
    else if (a === "secret" && b === "list") {
      if (listingFails)
        throw new WranglerError(
          args,
          1,
          "✘ [ERROR] A request to the Cloudflare API failed.\n\n  Service Unavailable [code: 10013]",
        );
      if (!state.controlDeployed) {
        throw new WranglerError(
          args,
          1,
          "✘ [ERROR] A request to the Cloudflare API failed.\n\n  workers.api.error.script_not_found [code: 10007]",
        );
      }
      return JSON.stringify([...state.secrets].map((name) => ({ name, type: "secret_text" })));
    } else if (a === "deploy" && c === "resolver.json") {
      // As Cloudflare does: a binding to a script (or its Durable Object class) that does not exist is refused.
      if (!state.controlDeployed) throw new Error("binding PUBLICATION_SEQUENCER: script passport-control not found");
      state.resolverDeployed = true;
    } else if (a === "deploy" && c === "control.json") {
      if (!state.resolverDeployed) throw new Error("service binding RESOLVER: script passport-resolver not found");
      state.controlDeployed = true;
    } else if (a === "deploy" && c === "control-first.json") state.controlDeployed = true;
    return "";
  };
  const context = (shards = 1): DeployContext => ({
    environment: "production",
    shards,
    run,
    fetch: async (url) =>
      String(url).endsWith("/health") ? new Response('{"status":"ok"}') : Response.json({ keys: [{ kid: "k" }] }),
    writeConfigs: () => ({ resolver: "resolver.json", control: "control.json", controlFirst: "control-first.json" }),
    secretsFile: (secrets) => {
      secretFiles.push(secrets);
      for (const name of Object.keys(secrets)) state.secrets.add(name);
      return { path: "secrets.json", remove: () => {} };
    },
    providedSecrets: {
      MARKETPLACE_AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
      MARKETPLACE_AWS_SECRET_ACCESS_KEY: "aws-secret",
      MARKETPLACE_EVENTS_SECRET: "events-secret-the-operator-chose",
    },
    // What the settings hold: the key set kept by the previous run, as main.ts writes it back.
    signingJwks: kept.at(-1) ?? { keys: [] },
    keepSigningJwks: (jwks) => kept.push(jwks),
    logVerifierKey: state.logVerifierKey,
    keepLogVerifierKey: (verifierKey) => {
      state.logVerifierKey = verifierKey;
    },
    urls: { resolver: "https://id.example.com", control: "https://passport.example.com" },
    log: () => {},
  });
  /** From now on `wrangler secret list` fails as a Cloudflare outage would. */
  const failListing = () => {
    listingFails = true;
  };
  return { calls, secretFiles, kept, context, failListing };
}

describe("deploy steps", () => {
  it("creates what is missing, migrates, deploys the control plane without its resolver binding, the resolver, the control plane, then re-runs without creating anything", async () => {
    const account = fakeAccount();
    const first = await deploy(account.context());
    expect(account.calls).toEqual([
      "kv namespace list",
      "kv namespace create passport-snapshots",
      "kv namespace list",
      "d1 list --json",
      "d1 create passport",
      "d1 create passport-directory",
      "d1 list --json",
      "queues info passport-acquisitions",
      "queues create passport-acquisitions",
      "queues info passport-acquisitions-dlq",
      "queues create passport-acquisitions-dlq",
      "queues info passport-binding-checks",
      "queues create passport-binding-checks",
      "queues info passport-notifications",
      "queues create passport-notifications",
      "queues info passport-notifications-dlq",
      "queues create passport-notifications-dlq",
      "secret list --format json -c control.json",
      "d1 migrations apply DB --remote -c control.json",
      "d1 migrations apply DIRECTORY --remote -c control.json",
      // Each Worker binds the other: the control plane goes first without RESOLVER, with its secrets.
      "deploy -c control-first.json --secrets-file secrets.json",
      "deploy -c resolver.json",
      "deploy -c control.json",
    ]);
    const [secrets = {}] = account.secretFiles;
    expect(Object.keys(secrets).sort()).toEqual([...CONTROL_SECRETS].sort());
    expect(secrets.MARKETPLACE_AWS_SECRET_ACCESS_KEY).toBe("aws-secret");
    expect(secrets.MARKETPLACE_EVENTS_SECRET).toBe("events-secret-the-operator-chose");
    expect(atob(secrets.MARKETPLACE_TOKEN_HASH_KEY ?? "")).toHaveLength(32);
    expect(first.newSigningKey).toMatchObject({ kty: "EC", alg: "ES256", use: "sig" });
    expect(first.newSigningKey).not.toHaveProperty("d");
    // The log key is made too; its verifier key is kept, named by the resolver's log origin.
    expect(JSON.parse(secrets.LOG_SIGNING_KEY ?? "{}")).toMatchObject({ kty: "OKP", crv: "Ed25519" });
    expect(first.newLogVerifierKey).toMatch(/^id\.example\.com\/log\+[0-9a-f]{8}\+/);
    // The change-notification key too (docs/events.md): its public half goes in the same key set, after the record key.
    expect(JSON.parse(secrets.NOTIFICATION_SIGNING_KEY ?? "{}")).toMatchObject({
      kty: "OKP",
      crv: "Ed25519",
      alg: "EdDSA",
    });
    expect(first.newNotificationKey).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
    expect(first.newNotificationKey).not.toHaveProperty("d");
    expect(account.kept).toEqual([{ keys: [first.newSigningKey, first.newNotificationKey] }]);

    account.calls.length = 0;
    const second = await deploy(account.context());
    expect(account.calls).toEqual([
      "kv namespace list",
      "d1 list --json",
      "queues info passport-acquisitions",
      "queues info passport-acquisitions-dlq",
      "queues info passport-binding-checks",
      "queues info passport-notifications",
      "queues info passport-notifications-dlq",
      "secret list --format json -c control.json",
      "d1 migrations apply DB --remote -c control.json",
      "d1 migrations apply DIRECTORY --remote -c control.json",
      "deploy -c resolver.json",
      "deploy -c control.json",
    ]);
    expect(second.newSigningKey).toBeUndefined();
    expect(second.newNotificationKey).toBeUndefined();
    expect(second.newLogVerifierKey).toBeUndefined();
    expect(account.secretFiles).toHaveLength(1);
  });

  it("adds a shard when the settings count one more: creates and migrates it, binds it with the others, and touches nothing else", async () => {
    const account = fakeAccount();
    const written: ResolvedIds[] = [];
    const withIds = (context: DeployContext): DeployContext => ({
      ...context,
      writeConfigs: (ids, jwks, logKey) => {
        written.push(ids);
        return context.writeConfigs(ids, jwks, logKey);
      },
    });
    await deploy(withIds(account.context(2)));
    // A first deploy with two shards: both and the directory are created and migrated.
    expect(account.calls.filter((call) => call.startsWith("d1"))).toEqual([
      "d1 list --json",
      "d1 create passport",
      "d1 create passport-shard-1",
      "d1 create passport-directory",
      "d1 list --json",
      "d1 migrations apply DB --remote -c control.json",
      "d1 migrations apply DB_SHARD_1 --remote -c control.json",
      "d1 migrations apply DIRECTORY --remote -c control.json",
    ]);
    expect(written.at(-1)?.d1DatabaseIds).toEqual({ DB: "d1-0", DB_SHARD_1: "d1-1", DIRECTORY: "d1-2" });

    // Adding a shard (docs/sharding.md, "Adding a shard"): shards 3 in the settings, the deploy run again.
    account.calls.length = 0;
    await deploy(withIds(account.context(3)));
    expect(account.calls.filter((call) => call.startsWith("d1"))).toEqual([
      "d1 list --json",
      "d1 create passport-shard-2",
      "d1 list --json",
      "d1 migrations apply DB --remote -c control.json",
      "d1 migrations apply DB_SHARD_1 --remote -c control.json",
      "d1 migrations apply DB_SHARD_2 --remote -c control.json",
      "d1 migrations apply DIRECTORY --remote -c control.json",
    ]);
    // The shards already there keep their databases; the new one is bound after them.
    expect(written.at(-1)?.d1DatabaseIds).toEqual({
      DB: "d1-0",
      DB_SHARD_1: "d1-1",
      DB_SHARD_2: "d1-3",
      DIRECTORY: "d1-2",
    });
    expect(account.calls.filter((call) => call.startsWith("deploy"))).toEqual([
      "deploy -c resolver.json",
      "deploy -c control.json",
    ]);
    const configs = generateConfigs(committed, "production", { ...production, shards: 3 }, written.at(-1));
    expect(configs.control.vars?.D1_SHARDS).toBe('["DB","DB_SHARD_1","DB_SHARD_2"]');
    expect(
      (configs.control.d1_databases as { binding: string; database_id: string }[]).map((db) => db.database_id),
    ).toEqual(["d1-0", "d1-1", "d1-3", "d1-2"]);
  });

  it("refuses to drop a shard: settings counting fewer shards than the account holds stop the deploy before anything is made", async () => {
    const account = fakeAccount();
    await deploy(account.context(3));
    account.calls.length = 0;
    await expect(deploy(account.context(2))).rejects.toThrow(
      "the settings count 2 shard(s), but the account has passport-shard-2 (shard 2): a shard cannot be removed, as the organisations placed in it would be out of reach; set shards to at least 3 (docs/sharding.md)",
    );
    expect(account.calls).toEqual(["kv namespace list", "d1 list --json"]);
  });

  it("stops before deploying anything when the secrets cannot be listed for a reason other than a missing control plane", async () => {
    const account = fakeAccount();
    await deploy(account.context());
    account.failListing();
    account.calls.length = 0;
    const uploads = account.secretFiles.length;
    await expect(deploy(account.context())).rejects.toThrow(
      /could not list the control plane's secrets \(wrangler secret list exited with 1\).*nothing was deployed/,
    );
    // Taken for a first deploy, it would have made new signing, log and token keys and uploaded them.
    expect(account.secretFiles).toHaveLength(uploads);
    expect(account.calls.filter((call) => call.startsWith("deploy") || call.startsWith("d1 migrations"))).toEqual([]);
  });

  it("on an environment whose control plane exists, deploys the resolver, then the control plane, only", async () => {
    const account = fakeAccount();
    await deploy(account.context());
    account.calls.length = 0;
    await deploy(account.context());
    expect(account.calls.filter((call) => call.startsWith("deploy"))).toEqual([
      "deploy -c resolver.json",
      "deploy -c control.json",
    ]);
    expect(workerDeploys(true)).toEqual(["resolver", "control"]);
    expect(workerDeploys(false)).toEqual(["controlFirst", "resolver", "control"]);
  });

  it("plans, for a dry run, the control plane's first upload without RESOLVER before the resolver that binds its class", () => {
    const names = resourceNames("staging");
    const lines = planLines(
      names,
      { resolver: "https://id.staging.example.com", control: "https://passport.staging.example.com" },
      ".deploy/staging",
      d1Databases("staging", 2),
    );
    expect(lines).toEqual([
      "1. find or create KV passport-snapshots-staging, D1 passport-staging (DB), passport-shard-1-staging (DB_SHARD_1) and passport-directory-staging (DIRECTORY), queues passport-acquisitions-staging, passport-acquisitions-staging-dlq, passport-binding-checks-staging, passport-notifications-staging and passport-notifications-staging-dlq",
      "2. write configuration to .deploy/staging/ and apply D1 migrations remotely to DB, DB_SHARD_1 and DIRECTORY",
      "3. on a first deploy only (no passport-control-staging yet): deploy passport-control-staging without its RESOLVER binding, with its secrets, so the resolver's binding to its PublicationSequencer has a class to bind",
      "4. deploy passport-resolver-staging on https://id.staging.example.com",
      "5. deploy passport-control-staging on https://passport.staging.example.com, with any missing secret (generated or from the environment)",
      "6. smoke check https://id.staging.example.com/health and /.well-known/jwks.json",
    ]);
    // What each upload binds: the first control upload nothing of the resolver's; the resolver the
    // class that upload created, in this environment's control plane.
    const configs = generateConfigs(committed, "staging", staging, {
      kvNamespaceId: "kv2",
      d1DatabaseIds: { DB: "d2", DIRECTORY: "dir2" },
    });
    const first = firstControlConfig(configs.control, names.resolver);
    expect(first.services).toEqual([]);
    expect({ ...first, services: configs.control.services }).toEqual(configs.control);
    expect(configs.resolver.durable_objects).toMatchObject({
      bindings: [
        { name: "PUBLICATION_SEQUENCER", class_name: "PublicationSequencer", script_name: "passport-control-staging" },
      ],
    });
  });

  it("stops before any deploy when an AWS credential is neither set nor provided", async () => {
    const account = fakeAccount();
    const context = { ...account.context(), providedSecrets: {} };
    await expect(deploy(context)).rejects.toThrow(
      [
        "secret MARKETPLACE_AWS_ACCESS_KEY_ID is not set on the control plane and not in the environment",
        "secret MARKETPLACE_AWS_SECRET_ACCESS_KEY is not set on the control plane and not in the environment",
      ].join("\n"),
    );
    expect(account.calls.filter((call) => call.startsWith("deploy"))).toEqual([]);
  });

  it("stops before any deploy when SIGNING_KEY is set but the settings trust no key", async () => {
    const account = fakeAccount();
    await deploy(account.context());
    account.calls.length = 0;
    const context = { ...account.context(), signingJwks: { keys: [] } };
    await expect(deploy(context)).rejects.toThrow(
      "secret SIGNING_KEY is set but the settings' signingJwks has no key: put its public half in the settings (docs/signing.md)",
    );
    expect(account.calls.filter((call) => call.startsWith("deploy"))).toEqual([]);
  });

  it("fails the smoke check on an empty JWKS", async () => {
    const account = fakeAccount();
    const context = { ...account.context(), fetch: async () => Response.json({ keys: [] }) };
    await expect(deploy(context)).rejects.toThrow("/.well-known/jwks.json has no keys");
  });
});

describe("npm run deploy -- --dry-run", () => {
  const dryRun = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(
      process.execPath,
      [
        "--experimental-strip-types",
        "--disable-warning=ExperimentalWarning",
        "scripts/deploy/main.ts",
        "--dry-run",
        ...args,
      ],
      // PASSPORT_CALLER_DIR as scripts/run.mjs sets it: the directory `npm run deploy` was run in.
      { cwd: root, encoding: "utf8", env: { ...process.env, DEPLOY_SETTINGS: "", PASSPORT_CALLER_DIR: root, ...env } },
    );

  it("without a settings file, names every field to fill in and exits 1, before building anything", () => {
    const result = dryRun(["--settings", "deploy/no-such-settings.json"]);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain("no settings file deploy/no-such-settings.json");
    expect(result.stdout).toContain("copy deploy/settings.example.json to deploy/settings.json");
    expect(result.stdout).not.toContain("wrangler deploy --dry-run");
    const lines = result.stderr.trim().split("\n");
    expect(lines).toEqual(fieldsToFill("production").map((line) => `preflight: ${line}`));
    expect(lines).toContain(
      "preflight: environments.production.accountId: put your Cloudflare account id: dashboard, Workers & Pages overview, 'Account ID' (or `npx wrangler whoami`)",
    );
  });

  describe("with an unchanged copy of the example settings", () => {
    let folder = "";
    let copy = "";
    beforeAll(() => {
      folder = mkdtempSync(join(tmpdir(), "passport-settings-"));
      copy = join(folder, "settings.json");
      copyFileSync(join(root, "deploy", "settings.example.json"), copy);
    });
    afterAll(() => rmSync(folder, { recursive: true, force: true }));
    const refusal = (environment: string) =>
      exampleValues(environment, environment === "staging" ? staging : production).map((line) => `preflight: ${line}`);

    it("refuses it by an absolute path, listing every example value by its settings field", () => {
      const result = dryRun(["--env", "production", "--settings", copy]);
      expect(result.status).toBe(1);
      expect(result.stdout).not.toContain("wrangler deploy --dry-run");
      expect(result.stderr.trim().split("\n")).toEqual(refusal("production"));
    });

    it("finds it by DEPLOY_SETTINGS, and by a path relative to where the command was run", () => {
      const byEnvironment = dryRun(["--env", "staging"], { DEPLOY_SETTINGS: copy });
      expect(byEnvironment.stderr.trim().split("\n")).toEqual(refusal("staging"));
      const relative = dryRun(["--settings", "settings.json"], { PASSPORT_CALLER_DIR: folder });
      expect(relative.status).toBe(1);
      expect(relative.stderr.trim().split("\n")).toEqual(refusal("production"));
    });
  });
});
