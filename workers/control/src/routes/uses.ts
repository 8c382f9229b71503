import { Hono } from "hono";
import { requireRole, visiblePassport } from "../access/membership.ts";
import { operation } from "../api/operations.ts";
import { decodeCursor, encodeCursor } from "../api/pagination.ts";
import { DeclarersQuery, UsesInput } from "../api/requests.ts";
import { DeclarersPage, isFlagged, PassportView } from "../api/views.ts";
import { usesAddition, usesRemoval } from "../changes/passport-changes.ts";
import type { AppEnv } from "../context.ts";
import { declarerCountsEverywhere, declarersEverywhere } from "../db/uses.ts";
import { applyChange } from "./passport-answers.ts";

// Agent uses links (docs/reciprocal-trust.md): an agent passport declares the API and MCP passports
// it calls (a change to the agent, published in its record), and the API's organisation sees which
// agent passports declare its passport. Mounted at /v1/passports. The public count is in public.ts.

export const uses = new Hono<AppEnv>();

uses.post(
  "/:id/uses",
  operation({
    method: "post",
    path: "/v1/passports/{id}/uses",
    summary: "Declare a passport this agent calls (published in the agent's record as uses; grants nothing)",
    role: "editor",
    body: { UsesInput },
    response: { PassportView },
    ifMatch: true,
  }),
  (c) =>
    applyChange(c, c.req.param("id"), (passport) =>
      usesAddition(c.get("db"), c.get("shards"), passport, c.req.valid("json").identity_id),
    ),
);

uses.delete(
  "/:id/uses/:targetId",
  operation({
    method: "delete",
    path: "/v1/passports/{id}/uses/{targetId}",
    summary: "Withdraw a uses link this agent declared",
    role: "editor",
    response: { PassportView },
    ifMatch: true,
  }),
  (c) => applyChange(c, c.req.param("id"), (passport) => usesRemoval(c.get("db"), passport, c.req.param("targetId"))),
);

uses.get(
  "/:id/declared-by",
  operation({
    method: "get",
    path: "/v1/passports/{id}/declared-by",
    summary: "The agent passports that declare they use this passport (members of its organisation only)",
    role: "viewer",
    query: DeclarersQuery,
    response: { DeclarersPage },
  }),
  async (c) => {
    const id = c.req.param("id");
    // Only the passport's own organisation sees who declares it; anyone else is told it does not exist.
    const { passport, membership } = await visiblePassport(c.get("db"), c.get("principal").subject, id);
    requireRole(membership, c.get("declaredRole"));
    const query = c.req.valid("query");
    const after = query.cursor ? decodeCursor(query.cursor) : undefined;
    const [counts, rows] = await Promise.all([
      declarerCountsEverywhere(c.get("shards"), id),
      declarersEverywhere(c.get("shards"), id, {
        after: after && { declaredAt: after.createdAt, agentId: after.id },
        limit: query.limit + 1,
      }),
    ]);
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return c.json({
      identity_id: id,
      declared_by: counts.total,
      flagged: counts.flagged,
      target_flagged: isFlagged(passport.lifecycle),
      items: page.map((row) => ({
        identity_id: row.agentId,
        display_name: row.displayName,
        organisation: { id: row.organisationId, name: row.organisationName },
        lifecycle: row.lifecycle,
        declared_at: row.declaredAt,
        flagged: isFlagged(row.lifecycle),
      })),
      next_cursor:
        rows.length > query.limit && last ? encodeCursor({ createdAt: last.declaredAt, id: last.agentId }) : null,
    });
  },
);
