import { mintIdentityId } from "@passport/domain";
import { Hono } from "hono";
import { requireMembership } from "../access.ts";
import type { AppEnv } from "../context.ts";
import { membershipIn } from "../db/organisations.ts";
import { createPassportStatements, findPassport, loadAggregate } from "../db/passports.ts";
import { HttpProblem } from "../http-problem.ts";
import { publishOrDefer } from "../publish.ts";
import { CreatePassportRequest } from "../requests.ts";
import { jsonBody } from "../validation.ts";
import { passportView } from "../views.ts";

export const passports = new Hono<AppEnv>();

passports.post("/", jsonBody(CreatePassportRequest), async (c) => {
  const db = c.get("db");
  const { subject } = c.get("principal");
  const body = c.req.valid("json");
  const membership = await requireMembership(db, subject, body.organisation_id, "editor");
  const id = mintIdentityId();
  const at = new Date().toISOString();
  await db.batch(
    createPassportStatements(db, {
      id,
      organisationId: membership.organisationId,
      family: body.family,
      displayName: body.display_name,
      environment: body.environment,
      version: body.version,
      bindings: body.bindings,
      actor: subject,
      at,
    }),
  );
  await publishOrDefer(c.env, id);
  const aggregate = await loadAggregate(db, id);
  if (!aggregate) throw new Error("created passport vanished");
  return c.json(passportView(aggregate, c.env), 201, { location: `/v1/passports/${id}` });
});

passports.get("/:id", async (c) => {
  const db = c.get("db");
  const id = c.req.param("id");
  const passport = await findPassport(db, id);
  const visible = passport && (await membershipIn(db, c.get("principal").subject, passport.organisationId));
  const aggregate = visible ? await loadAggregate(db, id) : undefined;
  if (!aggregate)
    throw new HttpProblem("identity-not-found", { detail: "No passport with this id in your organisations." });
  return c.json(passportView(aggregate, c.env));
});
