import { type D1Migration, env } from "cloudflare:test";

/**
 * The migrations that come before `name` (a file in migrations/), for a chain test to apply first.
 * Throws when no migration has that name, so a renamed file fails the test instead of emptying it.
 */
export function migrationsBefore(name: string, chain: D1Migration[] = env.TEST_MIGRATIONS): D1Migration[] {
  const index = chain.findIndex((m) => m.name === name);
  if (index < 0) throw new Error(`no migration named ${name}`);
  return chain.slice(0, index);
}
