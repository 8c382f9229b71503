import { Hono } from "hono";
import type { AppEnv } from "../context.ts";
import { membershipsOf } from "../db/organisations.ts";

export const me = new Hono<AppEnv>();

me.get("/", async (c) => {
  const { subject } = c.get("principal");
  const memberships = await membershipsOf(c.get("db"), subject);
  return c.json({
    subject,
    memberships: memberships.map((m) => ({ organisation_id: m.organisationId, role: m.role })),
  });
});
