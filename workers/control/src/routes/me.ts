import { Hono } from "hono";
import { Me } from "../api/openapi.ts";
import { operation } from "../api/operations.ts";
import type { AppEnv } from "../context.ts";
import { membershipsEverywhere } from "../db/fan-out.ts";

export const me = new Hono<AppEnv>();

me.get(
  "/",
  operation({
    method: "get",
    path: "/v1/me",
    summary: "Who the token belongs to and their memberships",
    role: "any member",
    response: { Me },
  }),
  async (c) => {
    const { subject } = c.get("principal");
    const memberships = await membershipsEverywhere(c.get("shards"), subject);
    return c.json({
      subject,
      memberships: memberships.map((m) => ({ organisation_id: m.organisationId, role: m.role })),
    });
  },
);
