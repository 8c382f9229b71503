import type { Finding, ReliedOn } from "../outcome.ts";

/** What one check of the record found: what it relied on, and what it found wrong, if anything. */
export interface Check {
  relied_on: ReliedOn;
  finding?: Finding;
}
