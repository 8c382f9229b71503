// The preflight: every reason a deploy would fail or lie, one line each, before anything runs.
import type { Configs, WorkerConfig } from "./config.ts";
import { CONTROL_SECRETS, PRODUCTION, resourceNames } from "./config.ts";

/** The simulator's product code (workers/marketplace-sim): never a real listing's. */
const SIMULATOR_PRODUCT_CODES = new Set(["prod-passport-api"]);
const PLACEHOLDER_IDS = new Set(["passport-local", "passport-directory-local", "passport-snapshots"]);

export type PreflightInput = {
  environment: string;
  configs: Configs;
  /** The development environment's control-plane Worker name (committed). */
  developmentControlName?: string | undefined;
  /** Set when the operator passed the explicit flag allowing entitlementCheck "subscription". */
  allowSubscriptionOnly?: boolean;
  /** Set when the deploy makes a missing SIGNING_KEY and adds its public half to SIGNING_JWKS
   * before deploying (scripts/deploy/steps.ts): an empty key set is then refused only when the
   * secret is known to exist already. */
  signingKeyMadeIfMissing?: boolean;
  /** Secret names already set on the control plane plus the ones this deploy will set; omit to skip. */
  secretsAvailable?: ReadonlySet<string>;
};

export function preflight(input: PreflightInput): string[] {
  const problems: string[] = [];
  const { resolver, control } = input.configs;
  for (const [which, config] of Object.entries(input.configs) as [string, WorkerConfig][]) {
    for (const [name, value] of Object.entries(config.vars ?? {})) {
      if (/\.invalid([/:]|$)/.test(hostOf(value)))
        problems.push(`${which}: ${name} points at a .invalid host (${value})`);
      if (/^https?:\/\/(127\.0\.0\.1|localhost)([:/]|$)/.test(value)) {
        problems.push(`${which}: ${name} points at this machine (${value})`);
      }
    }
    for (const kv of (config.kv_namespaces as { id?: string }[] | undefined) ?? []) {
      if (kv.id && PLACEHOLDER_IDS.has(kv.id)) problems.push(`${which}: KV namespace id "${kv.id}" is a placeholder`);
    }
    for (const db of (config.d1_databases as { database_id?: string }[] | undefined) ?? []) {
      if (db.database_id && PLACEHOLDER_IDS.has(db.database_id)) {
        problems.push(`${which}: D1 database_id "${db.database_id}" is a placeholder`);
      }
    }
    for (const service of (config.services as { binding: string; service: string }[] | undefined) ?? []) {
      if (/(^|-)sim(-|$)|simulator/.test(service.service)) {
        problems.push(`${which}: service binding ${service.binding} points at the simulator Worker ${service.service}`);
      }
    }
    if (config.vars?.DEV_AUTH_PUBLIC_JWK) {
      problems.push(`${which}: DEV_AUTH_PUBLIC_JWK (the development token key) is set outside development`);
    }
  }

  const jwks = parseJson(resolver.vars?.SIGNING_JWKS) as { keys?: unknown[] } | undefined;
  const keyWillBeMade = input.signingKeyMadeIfMissing && !input.secretsAvailable?.has("SIGNING_KEY");
  if (!jwks?.keys?.length && !keyWillBeMade)
    problems.push("resolver: SIGNING_JWKS is an empty key set; records could not be verified");

  const logKey = resolver.vars?.LOG_VERIFIER_KEY ?? "";
  const logName = logKey.split("+")[0];
  if (logKey && logName !== control.vars?.LOG_ORIGIN) {
    problems.push(
      `resolver: LOG_VERIFIER_KEY names the log "${logName}", but the control plane signs as LOG_ORIGIN "${control.vars?.LOG_ORIGIN}"`,
    );
  }
  if (!logKey && input.secretsAvailable?.has("LOG_SIGNING_KEY")) {
    problems.push("resolver: LOG_VERIFIER_KEY is empty; the transparency log's checkpoints could not be verified");
  }

  const vars = control.vars ?? {};
  if (vars.ENVIRONMENT === "development") {
    problems.push(`control: ENVIRONMENT is "development" in the ${input.environment} environment`);
  }
  if (/(^|\.)dev\.|127\.0\.0\.1|localhost|\.invalid/.test(hostOf(vars.AUTH_ISSUER ?? ""))) {
    problems.push(`control: AUTH_ISSUER is the development issuer (${vars.AUTH_ISSUER})`);
  }
  const families = parseJson(vars.MARKETPLACE_PRODUCT_FAMILIES) as Record<string, string> | undefined;
  const codes = Object.keys(families ?? {});
  if (codes.length === 0)
    problems.push("control: MARKETPLACE_PRODUCT_FAMILIES is empty; no purchase could be fulfilled");
  else if (codes.some((code) => SIMULATOR_PRODUCT_CODES.has(code))) {
    problems.push("control: MARKETPLACE_PRODUCT_FAMILIES still holds the simulator's product code prod-passport-api");
  }
  if (vars.MARKETPLACE_ENTITLEMENT_CHECK !== "get-entitlements" && !input.allowSubscriptionOnly) {
    problems.push(
      `control: MARKETPLACE_ENTITLEMENT_CHECK is "${vars.MARKETPLACE_ENTITLEMENT_CHECK}" (no entitlement call) without marketplace.allowSubscriptionOnly`,
    );
  }
  problems.push(...shardProblems(control));
  const productionControl = resourceNames(PRODUCTION).control;
  if (input.developmentControlName === productionControl) {
    problems.push(`control: the development environment's Worker name is "${productionControl}", the production name`);
  } else if (input.developmentControlName === control.name) {
    problems.push(
      `control: the ${input.environment} environment's Worker name "${control.name}" is the local development environment's; a stray \`wrangler deploy --env development\` would replace it: name the environment otherwise`,
    );
  }
  if (input.secretsAvailable) {
    for (const secret of CONTROL_SECRETS) {
      if (!input.secretsAvailable.has(secret)) problems.push(`control: secret ${secret} is missing`);
    }
  }
  return problems;
}

/** D1_SHARDS must name the control plane's D1 bindings, and more than one shard needs the directory (docs/sharding.md). */
function shardProblems(control: WorkerConfig): string[] {
  const bound = new Set(((control.d1_databases as { binding: string }[] | undefined) ?? []).map((db) => db.binding));
  const shards = parseJson(control.vars?.D1_SHARDS ?? '["DB"]');
  if (!Array.isArray(shards) || shards.length === 0) {
    return [`control: D1_SHARDS is not a non-empty JSON list of D1 bindings (${control.vars?.D1_SHARDS})`];
  }
  const problems = shards
    .filter((binding) => !bound.has(String(binding)))
    .map((binding) => `control: D1_SHARDS names ${String(binding)}, which is not a D1 binding of the control plane`);
  if (!bound.has("DIRECTORY")) problems.push("control: no DIRECTORY D1 binding, the directory of the shards");
  return problems;
}

function hostOf(value: string): string {
  try {
    return new URL(value).host;
  } catch {
    return value;
  }
}

function parseJson(value: string | undefined): unknown {
  try {
    return value === undefined ? undefined : JSON.parse(value);
  } catch {
    return undefined;
  }
}
