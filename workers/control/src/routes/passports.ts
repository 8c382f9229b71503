import { Hono } from "hono";
import { requireRole, visiblePassport } from "../access/membership.ts";
import { operation } from "../api/operations.ts";
import { decodeCursor, decodeSearchCursor, encodeCursor, encodeSearchCursor } from "../api/pagination.ts";
import {
  BatchRequest,
  HistoryQuery,
  ListPassportsQuery,
  MAX_BATCH_ITEMS,
  MarkDuplicateRequest,
  TransferRequest,
} from "../api/requests.ts";
import { BatchResults, HistoryPage, historyEvent, PassportPage, PassportView, passportSummary } from "../api/views.ts";
import { commitCreation } from "../changes/apply.ts";
import { authorityAddition, bindingContextChange } from "../changes/authority.ts";
import {
  authorityExpiry,
  authorityRemoval,
  bindingAddition,
  bindingRemoval,
  displayUpdate,
  duplicateRetirement,
  evidenceAddition,
  evidenceWithdrawal,
  roleForStateChange,
  stateChange,
  transfer,
} from "../changes/passport-changes.ts";
import {
  AuthorityExpiryRequest,
  AuthorityInput,
  BindingContextRequest,
  BindingInput,
  CreatePassportRequest,
  EvidenceInput,
  StateChangeRequest,
  UpdatePassportRequest,
} from "../changes/requests.ts";
import type { AppEnv } from "../context.ts";
import { membershipsEverywhere, organisationsByShard } from "../db/fan-out.ts";
import { membershipIn } from "../db/organisations.ts";
import { listAcrossShards, type ShardSlice, searchAcrossShards } from "../db/passport-pages.ts";
import { searchWords } from "../db/search.ts";
import type { Shards } from "../db/shards.ts";
import { verifiedAttestation } from "../evidence/attestation.ts";
import { Refusal } from "../failures.ts";
import { historyEvents } from "../history/pages.ts";
import { runBatch } from "./batch.ts";
import { applyChange, publishAndRespond, respondWithPassport } from "./passport-answers.ts";

export const passports = new Hono<AppEnv>();

passports.post(
  "/",
  operation({
    method: "post",
    path: "/v1/passports",
    summary: "Create a passport (409 when its primary binding already identifies an active passport)",
    role: "editor",
    body: { CreatePassportRequest },
    response: { PassportView },
    status: 201,
  }),
  async (c) => {
    const stored = await commitCreation(
      c.get("shards"),
      c.get("principal").subject,
      c.get("declaredRole"),
      c.req.valid("json"),
    );
    const id = stored.passport.id;
    c.header("location", `/v1/passports/${id}`);
    return publishAndRespond(c, stored, 201);
  },
);

passports.post(
  "/batch",
  operation({
    method: "post",
    path: "/v1/passports/batch",
    summary: `Up to ${MAX_BATCH_ITEMS} creates and changes in one request (details, bindings, evidence, environment and version, lifecycle), each with its single request's checks, role and result (publication coalesced)`,
    role: "editor",
    body: { BatchRequest },
    response: { BatchResults },
  }),
  async (c) => c.json(await runBatch(c, c.req.valid("json").items)),
);

passports.get(
  "/",
  operation({
    method: "get",
    path: "/v1/passports",
    summary: "List or search passports in your organisations (stable order, cursor pagination)",
    role: "viewer",
    query: ListPassportsQuery,
    response: { PassportPage },
  }),
  async (c) => {
    const shards = c.get("shards");
    const query = c.req.valid("query");
    const { subject } = c.get("principal");
    // A named organisation costs no membership read: the page's query checks it (one statement).
    // Otherwise the caller's organisations are found in every shard, and each shard reads its own.
    const slices = query.organisation_id
      ? [await shardSlice(shards, query.organisation_id)]
      : [...organisationsByShard(await membershipsEverywhere(shards, subject))].map(([shard, organisationIds]) => ({
          shard,
          db: shards.shard(shard),
          organisationIds,
        }));
    const filter = {
      memberSubject: query.organisation_id ? subject : undefined,
      family: query.family,
      lifecycle: query.lifecycle,
      environment: query.environment,
      limit: query.limit + 1,
    };
    const pageOf = async (from: ShardSlice[]) => {
      if (query.q) {
        const rows = await searchAcrossShards(from, searchWords(query.q), {
          ...filter,
          after: query.cursor ? decodeSearchCursor(query.cursor) : undefined,
        });
        const last = rows.slice(0, query.limit).at(-1);
        return { rows, next: rows.length > query.limit && last ? encodeSearchCursor(last) : null };
      }
      const rows = await listAcrossShards(from, {
        ...filter,
        after: query.cursor ? decodeCursor(query.cursor) : undefined,
      });
      const last = rows.slice(0, query.limit).at(-1);
      return {
        rows,
        next: rows.length > query.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
      };
    };
    let page = await pageOf(slices);
    // An empty page of a named organisation may come from a shard the isolate remembered from
    // before a move: the directory is asked again, and the page read again if it says elsewhere.
    if (query.organisation_id && page.rows.length === 0) {
      shards.forget(query.organisation_id);
      const fresh = await shardSlice(shards, query.organisation_id);
      if (fresh.shard !== slices[0]?.shard) page = await pageOf([fresh]);
    }
    return c.json({
      items: page.rows.slice(0, query.limit).map((row) => passportSummary(row, c.env)),
      next_cursor: page.next,
    });
  },
);

/** The one organisation a page names, in the shard that holds it (the isolate's cached answer). */
async function shardSlice(shards: Shards, organisationId: string): Promise<ShardSlice> {
  const shard = await shards.shardOfOrganisation(organisationId);
  return { shard, db: shards.shard(shard), organisationIds: [organisationId] };
}

passports.get(
  "/:id",
  operation({
    method: "get",
    path: "/v1/passports/{id}",
    summary: "A passport (ETag is its record version)",
    role: "viewer",
    response: { PassportView },
  }),
  async (c) => {
    await visiblePassport(c.get("db"), c.get("principal").subject, c.req.param("id"));
    return respondWithPassport(c, c.req.param("id"));
  },
);

passports.patch(
  "/:id",
  operation({
    method: "patch",
    path: "/v1/passports/{id}",
    summary:
      "Update the display name, the organisation's stated relationship (responsible or operator) or a separate operator organisation",
    role: "editor",
    body: { UpdatePassportRequest },
    response: { PassportView },
    ifMatch: true,
  }),
  (c) =>
    applyChange(c, c.req.param("id"), (passport) =>
      displayUpdate(c.get("db"), c.get("shards"), c.get("principal").subject, passport, c.req.valid("json")),
    ),
);

passports.post(
  "/:id/bindings",
  operation({
    method: "post",
    path: "/v1/passports/{id}/bindings",
    summary: "Add a binding (validated per class)",
    role: "editor",
    body: { BindingInput },
    response: { PassportView },
    ifMatch: true,
  }),
  (c) =>
    applyChange(c, c.req.param("id"), (passport) =>
      bindingAddition(c.get("db"), c.get("shards"), passport, c.req.valid("json")),
    ),
);

passports.delete(
  "/:id/bindings/:bindingId",
  operation({
    method: "delete",
    path: "/v1/passports/{id}/bindings/{bindingId}",
    summary: "Remove a binding",
    role: "editor",
    response: { PassportView },
    ifMatch: true,
  }),
  (c) =>
    applyChange(c, c.req.param("id"), (passport) => bindingRemoval(c.get("db"), passport, c.req.param("bindingId"))),
);

passports.patch(
  "/:id/bindings/:bindingId",
  operation({
    method: "patch",
    path: "/v1/passports/{id}/bindings/{bindingId}",
    summary: "Set or clear the environment and version of one binding (its proof of control is unchanged)",
    role: "editor",
    body: { BindingContextRequest },
    response: { PassportView },
    ifMatch: true,
  }),
  (c) =>
    applyChange(c, c.req.param("id"), (passport) =>
      bindingContextChange(c.get("db"), passport, c.req.param("bindingId"), c.req.valid("json")),
    ),
);

passports.post(
  "/:id/evidence",
  operation({
    method: "post",
    path: "/v1/passports/{id}/evidence",
    summary: "Add evidence (values that look like credentials are refused)",
    role: "editor",
    body: { EvidenceInput },
    response: { PassportView },
    ifMatch: true,
  }),
  (c) => {
    const body = c.req.valid("json");
    return applyChange(c, c.req.param("id"), async (passport) =>
      evidenceAddition(c.get("db"), passport, body, await verifiedAttestation(c.env, passport.id, body)),
    );
  },
);

passports.delete(
  "/:id/evidence/:evidenceId",
  operation({
    method: "delete",
    path: "/v1/passports/{id}/evidence/{evidenceId}",
    summary: "Withdraw evidence",
    role: "editor",
    response: { PassportView },
    ifMatch: true,
  }),
  (c) =>
    applyChange(c, c.req.param("id"), (passport) =>
      evidenceWithdrawal(c.get("db"), passport, c.req.param("evidenceId")),
    ),
);

passports.patch(
  "/:id/state",
  operation({
    method: "patch",
    path: "/v1/passports/{id}/state",
    summary: "Change state: environment, version, availability (editor); lifecycle (admin)",
    role: "editor",
    body: { StateChangeRequest },
    response: { PassportView },
    ifMatch: true,
  }),
  (c) => {
    const body = c.req.valid("json");
    return applyChange(
      c,
      c.req.param("id"),
      (passport) => stateChange(c.get("db"), passport, body),
      roleForStateChange(body),
    );
  },
);

passports.post(
  "/:id/authority",
  operation({
    method: "post",
    path: "/v1/passports/{id}/authority",
    summary:
      "Add authority: structured (action, scope, granted_by checked against your role, until when; owner or admin of the granting organisation) or free-text context (editor)",
    role: "editor",
    body: { AuthorityInput },
    response: { PassportView },
    ifMatch: true,
  }),
  (c) =>
    applyChange(c, c.req.param("id"), (passport) =>
      authorityAddition(c.get("db"), c.get("principal").subject, passport, c.req.valid("json")),
    ),
);

passports.post(
  "/:id/authority/:authorityId/expire",
  operation({
    method: "post",
    path: "/v1/passports/{id}/authority/{authorityId}/expire",
    summary: "End an authority context entry now or at a time (kept in the record with its expiry)",
    role: "editor",
    body: { AuthorityExpiryRequest },
    response: { PassportView },
    ifMatch: true,
  }),
  (c) =>
    applyChange(c, c.req.param("id"), (passport) =>
      authorityExpiry(c.get("db"), passport, c.req.param("authorityId"), c.req.valid("json")),
    ),
);

passports.delete(
  "/:id/authority/:authorityId",
  operation({
    method: "delete",
    path: "/v1/passports/{id}/authority/{authorityId}",
    summary: "Remove an authority context entry",
    role: "editor",
    response: { PassportView },
    ifMatch: true,
  }),
  (c) =>
    applyChange(c, c.req.param("id"), (passport) =>
      authorityRemoval(c.get("db"), passport, c.req.param("authorityId")),
    ),
);

passports.post(
  "/:id/duplicate-of",
  operation({
    method: "post",
    path: "/v1/passports/{id}/duplicate-of",
    summary: "Mark this passport a duplicate of a surviving one (retires it)",
    role: "admin",
    body: { MarkDuplicateRequest },
    response: { PassportView },
    ifMatch: true,
  }),
  async (c) => {
    const { survivor_id, reason } = c.req.valid("json");
    const id = c.req.param("id");
    if (survivor_id === id) throw new Refusal("invalid-request", { detail: "A passport cannot duplicate itself." });
    // The survivor may be in another shard (`duplicate_of` is a plain id): read through its own.
    const survivorShard = await c.get("shards").readIdentity(survivor_id);
    const { passport: survivor } = await visiblePassport(survivorShard, c.get("principal").subject, survivor_id);
    return applyChange(c, id, (duplicate) => duplicateRetirement(c.get("db"), duplicate, survivor, reason));
  },
);

passports.post(
  "/:id/transfer",
  operation({
    method: "post",
    path: "/v1/passports/{id}/transfer",
    summary: "Move responsibility to another organisation (owner of both)",
    role: "owner",
    body: { TransferRequest },
    response: { PassportView },
    ifMatch: true,
  }),
  async (c) => {
    const { organisation_id, reason } = c.req.valid("json");
    const targetShard = await c.get("shards").forOrganisation(organisation_id);
    const target = await membershipIn(targetShard, c.get("principal").subject, organisation_id);
    if (!target) throw new Refusal("route-not-found", { detail: "No such organisation." });
    // Owner of both: the declared role in the organisation the passport moves to as well.
    requireRole(target, c.get("declaredRole"));
    return applyChange(c, c.req.param("id"), (passport) => {
      // Decided once the passport is known to be visible to the caller, so the refusal reveals
      // nothing of a passport they cannot see. Its rows, history and publications live in its
      // organisation's shard, and their foreign keys hold only inside one database: a transfer
      // moves no rows between shards.
      if (targetShard !== c.get("db")) {
        throw new Refusal("crosses-shards", {
          detail: `Organisation ${organisation_id} is stored in another shard than this passport's organisation, so the passport cannot be transferred to it. Move one of the two organisations to the other's shard first.`,
        });
      }
      return transfer(c.get("db"), passport, organisation_id, reason);
    });
  },
);

passports.get(
  "/:id/history",
  operation({
    method: "get",
    path: "/v1/passports/{id}/history",
    summary: "Every change, oldest first",
    role: "viewer",
    query: HistoryQuery,
    response: { HistoryPage },
  }),
  async (c) => {
    const id = c.req.param("id");
    await visiblePassport(c.get("db"), c.get("principal").subject, id);
    const { after, limit } = c.req.valid("query");
    const rows = await historyEvents(c.env, c.get("db"), id, after, limit + 1);
    const page = rows.slice(0, limit);
    return c.json({
      items: page.map(historyEvent),
      next_after: rows.length > limit ? (page.at(-1)?.seq ?? null) : null,
    });
  },
);
