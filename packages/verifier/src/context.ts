import type { RecordCacheStore } from "./cache.ts";
import type { HttpPolicy } from "./http.ts";
import type { LogSettings } from "./log/check.ts";
import type { LogClient } from "./log/client.ts";
import type { TrustedKeys } from "./trusted-keys.ts";

/**
 * What the verifier's checks share, fixed when the `Verifier` is made: where records are read and
 * how, the clock, the cache, the trusted keys and the transparency log.
 */
export interface VerifierContext {
  /** The resolver's base URL, without a trailing slash. */
  resolver: string;
  http: HttpPolicy;
  now: () => number;
  cache: RecordCacheStore | undefined;
  keys: TrustedKeys;
  /** The transparency log records are checked against, made on first use; undefined without the `log` option. */
  log: (() => Promise<{ client: LogClient; settings: LogSettings }>) | undefined;
}

/** The address of a passport's public record at `resolver`. */
export function recordUrl(resolver: string, identityId: string): string {
  return `${resolver}/api/p/${encodeURIComponent(identityId)}.json`;
}
