import { Family } from "@passport/domain";
import { z } from "zod";

/**
 * Secrets of the marketplace handoff. They are set with `wrangler secret put` (and by
 * scripts/dev.mjs and vitest.config.ts locally), so `wrangler types` cannot see them.
 */
export interface MarketplaceSecrets {
  MARKETPLACE_AWS_ACCESS_KEY_ID?: string;
  MARKETPLACE_AWS_SECRET_ACCESS_KEY?: string;
  MARKETPLACE_AWS_SESSION_TOKEN?: string;
  /** HMAC-SHA-256 key (base64, 32 bytes) for the registration-token and claim-reference hashes. */
  MARKETPLACE_TOKEN_HASH_KEY?: string;
  /** AES-256-GCM key (base64, 32 bytes) that seals the token inside the queue message. */
  MARKETPLACE_TOKEN_ENCRYPTION_KEY?: string;
  /** Bearer secret the marketplace event relay presents on POST /marketplace/events. */
  MARKETPLACE_EVENTS_SECRET?: string;
  /**
   * Local development and tests only: the simulator Worker, reached through a service binding
   * instead of the network. Never bound in production.
   */
  MARKETPLACE_SIM?: Fetcher;
}

export type MarketplaceEnv = Env & MarketplaceSecrets;

/** A required secret; its absence is a deployment fault, reported without the value of anything. */
export function secret(env: MarketplaceEnv, name: Exclude<keyof MarketplaceSecrets, "MARKETPLACE_SIM">): string {
  const value = env[name];
  if (!value) throw new Error(`secret ${name} is not configured`);
  return value;
}

const ProductFamilies = z.record(z.string().min(1), Family);

/**
 * The configured product-code → passport-family table (MARKETPLACE_PRODUCT_FAMILIES, JSON).
 * @example
 * familyForProduct(env, "prod-passport-api"); // "api"
 */
export function familyForProduct(env: Pick<Env, "MARKETPLACE_PRODUCT_FAMILIES">, productCode: string) {
  const table = ProductFamilies.parse(JSON.parse(env.MARKETPLACE_PRODUCT_FAMILIES));
  return Object.hasOwn(table, productCode) ? table[productCode] : undefined;
}

export type EntitlementCheck = "get-entitlements" | "subscription";

export function entitlementCheck(env: Pick<Env, "MARKETPLACE_ENTITLEMENT_CHECK">): EntitlementCheck {
  return env.MARKETPLACE_ENTITLEMENT_CHECK === "get-entitlements" ? "get-entitlements" : "subscription";
}

export function retryBaseSeconds(env: Pick<Env, "ACQUISITION_RETRY_BASE_SECONDS">): number {
  const value = Number(env.ACQUISITION_RETRY_BASE_SECONDS);
  return Number.isFinite(value) && value >= 0 ? value : 2;
}
