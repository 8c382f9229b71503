import type { OrganisationExpectation, RequiredBinding, SeenVersion } from "./outcome.ts";
import type { AvailabilitySignal, Lifecycle } from "./record.ts";

/** Spec 4.1 freshness table. */
export type Consequence = "lower" | "changing" | "higher";
export const CONSEQUENCES: readonly Consequence[] = ["lower", "changing", "higher"];

/** Seconds, or a duration such as `"90s"`, `"15m"`, `"12h"`, `"30d"`. */
export type Duration = number | string;

export interface EvidenceRequirement {
  /** The claim, for example `organisation.domain_control`. */
  claim: string;
  /** The newest evidence for the claim must have been observed no longer ago than this. */
  maxAge?: Duration;
}

/** What the decision at hand needs from the passport. Anything left out is not checked (and `ok.unchecked` says so). */
export interface Expectation {
  family?: "api" | "agent";
  /** An organisation id (compared with `organisation.id`), or several members to compare. */
  organisation?: string | OrganisationExpectation;
  environment?: string;
  version?: string;
  /**
   * The address the caller is about to call. It must equal an `endpoint` binding or lie under one
   * (same origin, path below the bound path).
   */
  baseUrl?: string;
  /** Binding classes, optionally with the exact value, that must be bound. */
  bindings?: RequiredBinding[];
  /** Claims that must be supported by evidence, optionally no older than a maximum age. */
  evidence?: (string | EvidenceRequirement)[];
  /** Accepted lifecycle statuses; default `["active"]`. */
  lifecycle?: Lifecycle | Lifecycle[];
  /**
   * Accepted availability signals. Default: a published `degraded` or `unavailable` signal fails,
   * and a record without a signal passes. When given, the record must carry one of these.
   */
  availability?: AvailabilitySignal[];
  /** Default `lower`. */
  consequence?: Consequence;
  /** Maximum age of the copy of the record the decision uses. */
  maxAge?: Duration;
  signal?: AbortSignal;
  /** Also check the published history's chain up to this record (see `ResolveOptions.history`). */
  history?: boolean;
  /** A version seen before, which the record must not be older than (see `ResolveOptions.seen`). */
  seen?: SeenVersion;
  /**
   * `higher` only: a status token the API provider stapled to its answer (its `Passport-Status`
   * header). Checked offline against the pinned keys; when it is missing or not usable, the
   * verifier fetches one from the resolver's status route.
   */
  statusToken?: string;
  /** `higher` only: the oldest status token accepted, by its issue time; default 30 s. */
  statusMaxAge?: Duration;
  /**
   * The record to decide on instead of fetching it (a copy from a mirror, a cache or a file):
   * its bytes as served and its `Passport-Signature`. Its proof is checked as for a fetched one;
   * at `higher` consequence it must also be the record a status token states as current.
   */
  record?: SuppliedRecord;
}

/**
 * What a policy adds to an expectation (`Verifier.decide`): several accepted organisations and
 * environments, and a version range. They replace `organisation`, `environment` and `version`.
 */
export interface PolicyChecks {
  organisations?: (string | OrganisationExpectation)[];
  environments?: string[];
  /** A range (`^2.1.0`), or one exact version string. */
  versions?: string;
}

/** An expectation as `Verifier.decide` builds it from a policy. */
export interface DecisionExpectation extends Expectation {
  policy?: PolicyChecks;
}

/** A record obtained elsewhere: the body exactly as served, and the detached signature served with it. */
export interface SuppliedRecord {
  body: string;
  signature?: string;
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * Converts a {@link Duration} to seconds; `undefined` when it is not one.
 * @example
 * durationSeconds("15m"); // 900
 * durationSeconds(30); // 30
 */
export function durationSeconds(value: Duration): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : undefined;
  const match = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(value.trim());
  if (!match) return undefined;
  return Number(match[1]) * (UNITS[match[2] || "s"] ?? 1);
}

/** Converts or throws a `TypeError` naming the option, so a bad expectation is a usage error, not an outcome. */
export function requireDuration(value: Duration, name: string): number {
  const seconds = durationSeconds(value);
  if (seconds === undefined)
    throw new TypeError(`${name}: "${value}" is not a duration (seconds, or e.g. 90s, 15m, 12h, 30d)`);
  return seconds;
}
