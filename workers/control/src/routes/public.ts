import { Hono } from "hono";
import { operation } from "../api/operations.ts";
import { byClient, limitRequests } from "../api/rate-limit.ts";
import { isFlagged, PublicDeclarerCount } from "../api/views.ts";
import type { AppEnv } from "../context.ts";
import { findPassport } from "../db/passports.ts";
import { shardsOf } from "../db/shards.ts";
import { declarerCountsEverywhere } from "../db/uses.ts";
import { Refusal } from "../failures.ts";

// Public answers of the control plane, without a token (docs/reciprocal-trust.md). They say only
// numbers about passports whose records are public anyway: never who, never anything unpublished.

/** Shared caches may keep an answer this long; a count a minute old is as good as a fresh one. */
const PUBLIC_MAX_AGE_SECONDS = 60;

export const publicAnswers = new Hono<AppEnv>();

// Each answer is a database read anyone may ask for: per client address, like the other anonymous routes.
publicAnswers.use("*", limitRequests(["GET"], [{ limiter: "PUBLIC_READS_PER_CLIENT", key: byClient }]));

publicAnswers.get(
  "/passports/:id/declared-by",
  operation({
    method: "get",
    path: "/public/passports/{id}/declared-by",
    summary: "How many agent passports declare they use this passport (a count only; no token needed)",
    role: "public",
    response: { PublicDeclarerCount },
  }),
  async (c) => {
    const shards = shardsOf(c.env);
    const id = c.req.param("id");
    const passport = await findPassport(await shards.readIdentity(id), id);
    if (!passport) throw new Refusal("identity-not-found", { detail: "No passport has this id." });
    // The declaring agents are of any organisation, so in any shard.
    const counts = await declarerCountsEverywhere(shards, id);
    c.header("cache-control", `public, max-age=${PUBLIC_MAX_AGE_SECONDS}`);
    return c.json({
      identity_id: id,
      declared_by: counts.total,
      flagged: counts.flagged,
      target_flagged: isFlagged(passport.lifecycle),
    });
  },
);
