import { type Problem, type ProblemKind, problem, problemResponse } from "@passport/domain";
import { HTTPException } from "hono/http-exception";
import { isDatabaseFull } from "../db/client.ts";
import { isFencedWrite, OrganisationMoving } from "../db/shards.ts";
import { Refusal, StaleVersion } from "../failures.ts";
import { passportEtag } from "./views.ts";

/**
 * The one mapping from a failure to its RFC 9457 answer. Rules raise `Refusal`s (and the kinds of
 * refusal in `failures.ts`); Hono's built-in middleware raise `HTTPException`s. Everything else is
 * a fault of ours, answered as `internal` by the app's `onError`.
 */

/** The problem document of a refusal: its kind, what it says, and the current ETag of a stale version. */
export function problemOf(refusal: Refusal): Problem {
  if (refusal instanceof StaleVersion && refusal.current !== undefined) {
    return problem(refusal.kind, { ...refusal.details, current_etag: passportEtag(refusal.current) });
  }
  return problem(refusal.kind, refusal.details);
}

/** A refusal's answer: its problem document, with the headers its hints ask for. */
function refusalResponse(refusal: Refusal): Response {
  const headers: Record<string, string> = {};
  const { challengeRealm, retryAfterSeconds } = refusal.hints;
  if (challengeRealm !== undefined) headers["www-authenticate"] = `Bearer realm="${challengeRealm}"`;
  if (retryAfterSeconds !== undefined) headers["retry-after"] = String(retryAfterSeconds);
  return problemResponse(problemOf(refusal), headers);
}

/** The problem kind for a status a Hono built-in refused with. */
const KIND_BY_STATUS: Partial<Record<number, ProblemKind>> = {
  400: "invalid-request",
  401: "unauthenticated",
  403: "forbidden",
  404: "route-not-found",
  405: "method-not-allowed",
  413: "payload-too-large",
  415: "unsupported-media-type",
};

/**
 * A built-in middleware's refusal (body limit, CSRF origin check, ...) as the problem of its
 * status, never a 500. Its message is Hono's own fixed text, so no internals leak.
 */
function problemFromHttpException(error: HTTPException): Response {
  const kind = KIND_BY_STATUS[error.status] ?? (error.status >= 500 ? "internal" : "invalid-request");
  return problemResponse(problem(kind, error.message ? { detail: error.message } : {}));
}

/** Seconds a caller refused during a move is told to wait: a move's copy window is seconds. */
const MOVE_RETRY_SECONDS = 5;

function movingRefusal(organisationId: string | undefined): Refusal {
  return new Refusal(
    "organisation-moving",
    {
      detail: `${organisationId ? `Organisation ${organisationId}` : "The organisation"} is being moved to another shard; nothing was written. Retry shortly.`,
    },
    { retryAfterSeconds: MOVE_RETRY_SECONDS },
  );
}

/** The answer to any error a request raised (the app's `onError`). */
export function answerToError(error: unknown): Response {
  if (error instanceof Refusal) return refusalResponse(error);
  if (error instanceof HTTPException) return problemFromHttpException(error);
  // A write to an organisation being moved to another shard, refused by the directory or, if it
  // reached the old shard after the move fenced it there, by that shard (docs/sharding.md).
  if (error instanceof OrganisationMoving || isFencedWrite(error)) {
    return refusalResponse(movingRefusal(error instanceof OrganisationMoving ? error.organisationId : undefined));
  }
  if (isDatabaseFull(error)) {
    console.error(JSON.stringify({ level: "error", event: "database_full", message: String(error) }));
    return problemResponse(
      problem("storage-full", {
        detail:
          "The change was not made: the service's database is full. Reading still works; retry once the operator has made room.",
      }),
    );
  }
  console.error(JSON.stringify({ level: "error", event: "unhandled", message: String(error) }));
  return problemResponse(
    problem("internal", {
      detail: "Something went wrong on our side. Retry, or contact support with the time of the request.",
    }),
  );
}
