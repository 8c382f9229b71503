import { type Context, Hono } from "hono";
import { requireMembership } from "../access/membership.ts";
import { subjectRefusal } from "../access/subject.ts";
import { afterRecovery } from "../api/after-recovery.ts";
import { Organisation, OrganisationList } from "../api/openapi.ts";
import { operation } from "../api/operations.ts";
import { CreateOrganisationRequest, PutMemberRequest, UpdateOrganisationRequest } from "../api/requests.ts";
import { publishOrganisationChange } from "../changes/organisation-changes.ts";
import type { AppEnv } from "../context.ts";
import { randomId } from "../db/client.ts";
import { organisationsEverywhere } from "../db/fan-out.ts";
import {
  childrenOf,
  movedScope,
  organisationHistory,
  renamedScope,
  renameOrganisation,
  setParent,
  subscriptionsOf,
} from "../db/organisation-changes.ts";
import {
  createOrganisation,
  membersOf,
  organisationWithParent,
  putMember,
  type Role,
  removeMember,
  shardOfSubject,
} from "../db/organisations.ts";
import { Refusal } from "../failures.ts";

export const organisations = new Hono<AppEnv>();

organisations.get(
  "/",
  operation({
    method: "get",
    path: "/v1/organisations",
    summary: "Your organisations",
    role: "any member",
    response: { OrganisationList },
  }),
  async (c) => {
    const rows = await organisationsEverywhere(c.get("shards"), c.get("principal").subject);
    return c.json({
      items: rows.map((o) => ({
        id: o.id,
        name: o.name,
        parent_id: o.parentId,
        role: o.role,
        created_at: o.createdAt,
      })),
    });
  },
);

organisations.post(
  "/",
  operation({
    method: "post",
    path: "/v1/organisations",
    summary: "Create an organisation (you become its owner; admin of the parent to attach one)",
    role: "any member",
    body: { CreateOrganisationRequest },
    status: 201,
  }),
  async (c) => {
    const shards = c.get("shards");
    const { subject } = c.get("principal");
    const body = c.req.valid("json");
    if (body.parent_id)
      await requireMembership(await shards.forOrganisation(body.parent_id), subject, body.parent_id, "admin");
    const id = randomId("org");
    // Placed before it is written (a sub-organisation in its parent's shard, any other beside its
    // creator's organisations, docs/sharding.md), so it is never in a shard the directory does not name.
    const shard = body.parent_id
      ? await shards.placeOrganisation(id, { parentId: body.parent_id })
      : await shards.placeOrganisation(id, { shard: await shardOfSubject(shards, subject) });
    await createOrganisation(shards.shard(shard), {
      id,
      name: body.name,
      parentId: body.parent_id,
      ownerSubject: subject,
    });
    c.header("location", `/v1/organisations/${id}`);
    return c.json({ id, name: body.name, parent_id: body.parent_id ?? null, role: "owner" }, 201);
  },
);

async function organisationView(c: Context<AppEnv>, id: string, role: Role) {
  const db = c.get("db");
  const found = await organisationWithParent(db, id);
  if (!found) throw new Refusal("route-not-found", { detail: "No such organisation." });
  const [members, children, history, subscriptions] = await Promise.all([
    membersOf(db, id),
    childrenOf(db, id),
    organisationHistory(db, id),
    subscriptionsOf(db, id),
  ]);
  const recovered = await afterRecovery(
    db,
    c.env.RESOLVER_BASE_URL,
    id,
    c.get("principal").subject,
    history.map((e) => ({ kind: e.kind, at: e.at, detail: e.detail })),
  );
  return {
    id,
    name: found.organisation.name,
    parent: found.parent ? { id: found.parent.id, name: found.parent.name } : null,
    role,
    after_recovery: recovered,
    members: members.map((m) => ({ subject: m.subject, role: m.role, since: m.createdAt })),
    children,
    history: history.map((e) => ({ kind: e.kind, actor: e.actor, at: e.at, detail: e.detail })),
    subscriptions: subscriptions.map((s) => ({
      product_code: s.productCode,
      license_arn: s.licenseArn,
      aws_account_id: s.awsAccountId,
      status: s.status,
      status_at: s.statusAt,
      last_event: s.lastEvent,
      since: s.since,
    })),
  };
}

organisations.get(
  "/:id",
  operation({
    method: "get",
    path: "/v1/organisations/{id}",
    summary: "An organisation with its parent, children, members and history",
    role: "viewer",
    response: { Organisation },
  }),
  async (c) => {
    const id = c.req.param("id");
    const membership = await requireMembership(c.get("db"), c.get("principal").subject, id, c.get("declaredRole"));
    return c.json(await organisationView(c, id, membership.role));
  },
);

/**
 * Renames an organisation or moves it under another parent (spec 2.1: the record says who stands
 * behind a passport). Both are kept in the organisation's history with who did it, and published:
 * every record naming the organisation (its passports; on a rename also its children's, which name
 * it as parent) gets a new version.
 */
organisations.patch(
  "/:id",
  operation({
    method: "patch",
    path: "/v1/organisations/{id}",
    summary: "Rename an organisation or set its parent (admin; admin of the new parent too); republished",
    role: "admin",
    body: { UpdateOrganisationRequest },
    response: { Organisation },
  }),
  async (c) => {
    const db = c.get("db");
    const id = c.req.param("id");
    const actor = c.get("principal").subject;
    const body = c.req.valid("json");
    const membership = await requireMembership(db, actor, id, c.get("declaredRole"));
    const found = await organisationWithParent(db, id);
    if (!found) throw new Refusal("route-not-found", { detail: "No such organisation." });
    const at = new Date().toISOString();
    const reason = body.reason ? { reason: body.reason } : {};

    if (body.parent_id !== undefined && body.parent_id !== found.organisation.parentId) {
      if (body.parent_id !== null) await requireParentInShard(c, body.parent_id);
      const detail = { from: found.organisation.parentId, to: body.parent_id, ...reason };
      if (!(await setParent(db, id, body.parent_id, { actor, at, kind: "organisation.parent_changed", detail }))) {
        throw new Refusal("invalid-request", {
          detail: "An organisation cannot be placed under itself or under one of its own children.",
        });
      }
      await publishOrganisationChange(c.env, db, movedScope(id));
    }
    if (body.name !== undefined && body.name !== found.organisation.name) {
      const detail = { from: found.organisation.name, to: body.name, ...reason };
      const scope = renamedScope(id);
      await renameOrganisation(db, id, body.name, { actor, at, kind: "organisation.renamed", detail }, scope);
      await publishOrganisationChange(c.env, db, scope);
    }
    return c.json(await organisationView(c, id, membership.role));
  },
);

/**
 * Adds a member or changes a member's role. Account recovery uses this too: an owner adds the
 * member's new subject; organisations and passports are untouched (spec 5.2).
 */
organisations.put(
  "/:id/members/:subject",
  operation({
    method: "put",
    path: "/v1/organisations/{id}/members/{subject}",
    summary: "Add a member or change a role; also account recovery (add the new subject)",
    role: "admin",
    body: { PutMemberRequest },
    alsoStatus: 201,
  }),
  async (c) => {
    const db = c.get("db");
    const id = c.req.param("id");
    const subject = c.req.param("subject");
    const refused = subjectRefusal(subject);
    if (refused) {
      throw new Refusal("invalid-request", {
        detail: `The member's subject ${refused}.`,
        errors: [{ path: "subject", message: refused }],
      });
    }
    const { role } = c.req.valid("json");
    const caller = await requireMembership(db, c.get("principal").subject, id, c.get("declaredRole"));
    const existing = (await membersOf(db, id)).find((m) => m.subject === subject);
    if ((role === "owner" || existing?.role === "owner") && caller.role !== "owner") {
      throw ownerRoleReserved();
    }
    // The checks above word the common refusals; the statement itself holds the rules under races.
    if (!(await putMember(db, id, subject, role, caller.role === "owner"))) throw refusalOfOwnerChange(caller.role);
    return c.json({ subject, role }, existing ? 200 : 201);
  },
);

organisations.delete(
  "/:id/members/:subject",
  operation({
    method: "delete",
    path: "/v1/organisations/{id}/members/{subject}",
    summary: "Remove a member",
    role: "admin",
    status: 204,
  }),
  async (c) => {
    const db = c.get("db");
    const id = c.req.param("id");
    const subject = c.req.param("subject");
    const caller = await requireMembership(db, c.get("principal").subject, id, c.get("declaredRole"));
    const existing = (await membersOf(db, id)).find((m) => m.subject === subject);
    if (!existing) throw new Refusal("route-not-found", { detail: "No such member." });
    if (existing.role === "owner" && caller.role !== "owner") {
      throw ownerRoleReserved();
    }
    // The checks above word the common refusals; the statement itself holds the rules under races.
    if (!(await removeMember(db, id, subject, caller.role === "owner"))) throw refusalOfOwnerChange(caller.role);
    return c.body(null, 204);
  },
);

/**
 * The new parent an organisation is placed under, checked: the caller is its admin, and it is in
 * the organisation's shard, since `organisations.parent_id` is a foreign key and holds only inside
 * one database (docs/sharding.md). A parent elsewhere is refused with `crosses-shards`.
 */
async function requireParentInShard(c: Context<AppEnv>, parentId: string): Promise<void> {
  const parentShard = await c.get("shards").forOrganisation(parentId);
  await requireMembership(parentShard, c.get("principal").subject, parentId, "admin");
  if (parentShard !== c.get("db")) {
    throw new Refusal("crosses-shards", {
      detail: `Organisation ${parentId} is stored in another shard than this organisation, so it cannot become its parent. Move one of the two organisations to the other's shard first.`,
    });
  }
}

/** Why a membership statement changed nothing: the member became an owner meanwhile, or was the last one. */
function refusalOfOwnerChange(callerRole: Role): Refusal {
  return callerRole === "owner" ? lastOwnerKept() : ownerRoleReserved();
}

const lastOwnerKept = () => new Refusal("invalid-request", { detail: "An organisation keeps at least one owner." });
const ownerRoleReserved = () =>
  new Refusal("forbidden", { detail: "Only an owner can grant, change or remove the owner role." });
