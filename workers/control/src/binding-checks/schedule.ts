import type { CHECK_OUTCOMES } from "../db/schema.ts";
import { PROOF_LIFETIME_MS } from "./checks.ts";

// The re-check rules (docs/bindings.md, "Re-checks"): when a binding is next checked, and what
// one check's answer does to it. Pure: the time and the jitter's random number are passed in.

export type CheckOutcome = (typeof CHECK_OUTCOMES)[number];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A verified binding is re-checked once less than this is left of its proof. */
const RECHECK_WINDOW_MS = 2 * DAY;
/** Renewals are spread over this much time before the window opens, so a day's proofs do not all fall due at once. */
const RENEWAL_SPREAD_MS = 6 * HOUR;
/**
 * The renewal cadence the capacity plan rests on (docs/scaling.md): a proof lasts PROOF_LIFETIME_MS
 * and is renewed at most RENEWAL_SPREAD_MS before its re-check window, so each verified binding
 * needs one check every `intervalMs` (4.75 days) at the most.
 */
export const RENEWAL = {
  proofLifetimeMs: PROOF_LIFETIME_MS,
  intervalMs: PROOF_LIFETIME_MS - RECHECK_WINDOW_MS - RENEWAL_SPREAD_MS,
} as const;
/** A claimed check that reports nothing (lost message, interrupted consumer) is taken again after this. */
export const CLAIM_LEASE_MS = 30 * MINUTE;
/** Backoff while a verified binding's host does not answer: 5 minutes, doubling, at most 6 hours. */
const RETRY_FIRST_MS = 5 * MINUTE;
const RETRY_MAX_MS = 6 * HOUR;
/** A lapsed binding is tried again after a day, doubling, at most a week. */
const LAPSED_FIRST_MS = DAY;
const LAPSED_MAX_MS = 7 * DAY;

/** What one check found: the proof holds, no answer came, the answer contradicts it, or the check failed. */
export type Observation =
  | { kind: "proven" }
  | { kind: "unreachable"; reason: string }
  | { kind: "mismatch"; reason: string }
  | { kind: "error"; reason: string };

export interface BindingSchedule {
  state: "claimed" | "verified" | "lapsed";
  /** The end of a verified binding's proof. */
  freshUntil: string | null;
  /** Scheduled checks in a row that did not prove control. */
  failures: number;
}

/**
 * What a scheduled check's answer does: `verify` records the proof (a renewal, or a lapsed binding
 * recovering); `lapse` ends a verified binding's proof; `retry` keeps the state and tries again at
 * `nextCheckAt`.
 */
export type Decision =
  | { action: "verify"; outcome: "verified" }
  | { action: "lapse"; outcome: "mismatch" | "expired"; reason: string; nextCheckAt: string }
  | { action: "retry"; outcome: CheckOutcome; reason: string; nextCheckAt: string; failures: number };

/** `base` doubled per earlier failure, at most `max`, then scaled by 0.5 to 1 (jitter, so retries spread). */
function backoff(failures: number, base: number, max: number, random: number): number {
  const full = Math.min(max, base * 2 ** Math.min(Math.max(failures - 1, 0), 20));
  return Math.round(full * (0.5 + random / 2));
}

/** When a proof ending at `freshUntil` is next checked: before the re-check window opens, spread. */
export function renewalCheckAt(freshUntil: string, random: number): string {
  return new Date(Date.parse(freshUntil) - RECHECK_WINDOW_MS - random * RENEWAL_SPREAD_MS).toISOString();
}

/**
 * Whether a successful check that renews a verified proof ending at `freshUntil` must reach the
 * record now (docs/bindings.md, "Renewals"): once the earliest time the schedule could renew it
 * has come (the re-check window less its spread), the published proof would otherwise run out
 * before the next check. Before that the renewal is held in D1: the published proof is older
 * than the check but still true, and stays true until its own `fresh_until`.
 */
export function renewalMustPublish(freshUntil: string, now: Date): boolean {
  return now.getTime() >= Date.parse(renewalWindow(freshUntil).opens);
}

/** When the schedule renews a proof ending at `freshUntil`: from the window less its spread, to the window. */
export function renewalWindow(freshUntil: string): { opens: string; closes: string } {
  const end = Date.parse(freshUntil);
  return {
    opens: new Date(end - RECHECK_WINDOW_MS - RENEWAL_SPREAD_MS).toISOString(),
    closes: new Date(end - RECHECK_WINDOW_MS).toISOString(),
  };
}

/** When a binding that has just lapsed (its `failures`-th failure since) is tried again. */
function lapsedCheckAt(now: Date, failures: number, random: number): string {
  return new Date(now.getTime() + backoff(failures, LAPSED_FIRST_MS, LAPSED_MAX_MS, random)).toISOString();
}

/**
 * The rules. Unreachable is not a mismatch: a verified binding whose host does not answer (or
 * whose check fails) stays verified and is retried with backoff, never later than the end of its
 * proof; only an answer that contradicts the proof, or the proof running out, lapses it. A lapsed
 * binding is retried on a slower schedule and is verified again when its proof returns.
 */
export function decide(binding: BindingSchedule, observed: Observation, now: Date, random: number): Decision {
  if (observed.kind === "proven") return { action: "verify", outcome: "verified" };
  const failures = binding.failures + 1;
  if (binding.state === "verified") {
    const end = binding.freshUntil ? Date.parse(binding.freshUntil) : now.getTime();
    if (observed.kind === "mismatch") {
      return {
        action: "lapse",
        outcome: "mismatch",
        reason: observed.reason,
        nextCheckAt: lapsedCheckAt(now, 1, random),
      };
    }
    if (end <= now.getTime()) {
      return {
        action: "lapse",
        outcome: "expired",
        reason: `the proof ran out without an answer: ${observed.reason}`,
        nextCheckAt: lapsedCheckAt(now, 1, random),
      };
    }
    const retryAt = Math.min(now.getTime() + backoff(failures, RETRY_FIRST_MS, RETRY_MAX_MS, random), end);
    return {
      action: "retry",
      outcome: observed.kind,
      reason: observed.reason,
      nextCheckAt: new Date(retryAt).toISOString(),
      failures,
    };
  }
  return {
    action: "retry",
    outcome: observed.kind,
    reason: observed.reason,
    nextCheckAt: lapsedCheckAt(now, failures, random),
    failures,
  };
}
