// `npm run deploy -- [--env <name>] [--settings <file>] [--dry-run] [--allow-subscription-only]`
// (docs/deploy.md). The dry run makes no network call: it prints the plan, runs the preflight and
// builds both Workers with `wrangler deploy --dry-run` against the generated configuration.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import {
  committedConfigs,
  committedDevelopmentName,
  d1Databases,
  generateConfigs,
  generatedDir,
  resourceNames,
  writeConfigs,
} from "./config.ts";
import { exampleValues, fieldsToFill } from "./examples.ts";
import { preflight } from "./preflight.ts";
import { callerDir, DEFAULT_SETTINGS, locateSettings, readSettings, SettingsError } from "./settings.ts";
import { deploy, planLines, type Runner, WranglerError } from "./steps.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const RESOLVER_GZIP_BUDGET = 60 * 1024;
const { values } = parseArgs({
  options: {
    env: { type: "string", default: "production" },
    settings: { type: "string", default: process.env.DEPLOY_SETTINGS || undefined },
    "dry-run": { type: "boolean", default: false },
    "allow-subscription-only": { type: "boolean", default: false },
  },
});
const environment = values.env;
const { file: settingsFile, lookedAt } = locateSettings(values.settings, { root, callerDir: callerDir() });
const settingsName = values.settings ?? DEFAULT_SETTINGS;
const log = (line: string) => process.stdout.write(`${line}\n`);
function fail(lines: string[]): never {
  for (const line of lines) process.stderr.write(`preflight: ${line}\n`);
  process.exit(1);
}

const wrangler: Runner = (args) =>
  new Promise((resolve, reject) => {
    const child = spawn(join(root, "node_modules", ".bin", "wrangler"), args, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    // Shown as wrangler prints it, and kept: some failures are told apart by Cloudflare's code.
    child.stderr.on("data", (chunk) => {
      err += chunk;
      process.stderr.write(chunk);
    });
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new WranglerError(args, code, err))));
  });

const developmentControlName = committedDevelopmentName(root);
if (!existsSync(settingsFile)) {
  // Without settings nothing can be deployed: name every field the operator's file must hold.
  log(`no settings file ${settingsName} (looked at ${lookedAt.join(" and ")})`);
  log(
    `copy deploy/settings.example.json to ${DEFAULT_SETTINGS} (or name your file with --settings or DEPLOY_SETTINGS) and fill in, for each environment:`,
  );
  fail(fieldsToFill(environment));
}

let settings: ReturnType<typeof readSettings>;
try {
  settings = readSettings(settingsFile);
} catch (error) {
  if (error instanceof SettingsError) fail(error.lines);
  throw error;
}
const envSettings = settings.environments[environment];
if (!envSettings) fail([`${settingsName} has no environment "${environment}"`]);
const allowSubscriptionOnly = values["allow-subscription-only"] || envSettings.marketplace.allowSubscriptionOnly;
const committed = committedConfigs(root);
const dir = generatedDir(root, environment);
const names = resourceNames(environment);
const urls = { resolver: `https://${envSettings.resolverDomain}`, control: `https://${envSettings.controlDomain}` };

const dry = generateConfigs(committed, environment, envSettings);
const offsets = Object.values(settings.environments).map((env) => env.rateLimitNamespaceOffset);
const shared = offsets.length !== new Set(offsets).size ? ["two environments share a rateLimitNamespaceOffset"] : [];
const problems = [
  ...exampleValues(environment, envSettings),
  ...shared,
  // The deploy makes a missing signing key and adds its public half before deploying anything.
  ...preflight({
    environment,
    configs: dry,
    developmentControlName,
    allowSubscriptionOnly,
    signingKeyMadeIfMissing: true,
  }),
];
if (problems.length) fail(problems);

log(`plan for ${environment} (account ${envSettings.accountId}):`);
for (const line of planLines(names, urls, relative(root, dir), d1Databases(environment, envSettings.shards)))
  log(`  ${line}`);

if (values["dry-run"]) {
  const files = writeConfigs(dry, dir, environment);
  // controlFirst: what a first deploy uploads before the resolver (steps.ts, workerDeploys).
  for (const which of ["resolver", "control", "controlFirst"] as const) {
    log(`building ${which} with wrangler deploy --dry-run`);
    await wrangler(["deploy", "--dry-run", "--outdir", join(dir, "dist", which), "-c", files[which]]);
  }
  // The resolver's size budget (docs/resolver.md): a stray import of the zod schemas once
  // quadrupled it unnoticed, so every dry run checks it.
  const resolverGzip = gzipSync(readFileSync(join(dir, "dist", "resolver", "index.js"))).length;
  if (resolverGzip > RESOLVER_GZIP_BUDGET) {
    throw new Error(
      `the resolver bundle is ${Math.round(resolverGzip / 1024)} KiB gzip, over its ${RESOLVER_GZIP_BUDGET / 1024} KiB budget`,
    );
  }
  log(`resolver bundle: ${Math.round(resolverGzip / 1024)} KiB gzip (budget ${RESOLVER_GZIP_BUDGET / 1024} KiB)`);
  log("dry run passed: nothing was sent to Cloudflare");
} else {
  process.env.CLOUDFLARE_ACCOUNT_ID = envSettings.accountId;
  const result = await deploy({
    environment,
    shards: envSettings.shards,
    run: wrangler,
    fetch,
    signingJwks: envSettings.signingJwks,
    urls,
    providedSecrets: {
      MARKETPLACE_AWS_ACCESS_KEY_ID: process.env.MARKETPLACE_AWS_ACCESS_KEY_ID,
      MARKETPLACE_AWS_SECRET_ACCESS_KEY: process.env.MARKETPLACE_AWS_SECRET_ACCESS_KEY,
      MARKETPLACE_EVENTS_SECRET: process.env.MARKETPLACE_EVENTS_SECRET,
    },
    writeConfigs: (ids, signingJwks, logVerifierKey) =>
      writeConfigs(
        generateConfigs(committed, environment, { ...envSettings, signingJwks, logVerifierKey }, ids),
        dir,
        environment,
      ),
    secretsFile: (secrets) => {
      const folder = mkdtempSync(join(tmpdir(), "passport-secrets-"));
      const path = join(folder, "secrets.json");
      writeFileSync(path, JSON.stringify(secrets), { mode: 0o600 });
      return { path, remove: () => rmSync(folder, { recursive: true, force: true }) };
    },
    keepSigningJwks: (jwks) => {
      // The public half must survive into the next deploy: it is kept in the operator's settings.
      const raw = JSON.parse(readFileSync(settingsFile, "utf8"));
      raw.environments[environment].signingJwks = jwks;
      writeFileSync(settingsFile, `${JSON.stringify(raw, null, 2)}\n`);
      log(`added a new signing key's public half to ${settingsName}; keep it with your settings`);
    },
    logVerifierKey: envSettings.logVerifierKey,
    keepLogVerifierKey: (verifierKey) => {
      const raw = JSON.parse(readFileSync(settingsFile, "utf8"));
      raw.environments[environment].logVerifierKey = verifierKey;
      writeFileSync(settingsFile, `${JSON.stringify(raw, null, 2)}\n`);
      log(`added the new transparency log key's verifier key to ${settingsName}; keep it with your settings`);
    },
    log,
  });
  log(`resolver: ${result.resolverUrl}`);
  log(`control plane (Dashboard): ${result.controlUrl}/dashboard`);
}
