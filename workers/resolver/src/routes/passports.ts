import {
  describeIdentityIdDefect,
  identityIdDefect,
  problem,
  problemResponse,
  type SnapshotMetadata,
  snapshotKey,
} from "@passport/domain";
import { Hono } from "hono";

export const passports = new Hono<{ Bindings: Env }>();

passports.get("/:file", async (c) => {
  const file = c.req.param("file");
  if (!file.endsWith(".json")) return c.notFound();
  const identityId = file.slice(0, -".json".length);
  const defect = identityIdDefect(identityId);
  if (defect) {
    return problemResponse(problem("malformed-identity-id", { detail: describeIdentityIdDefect(defect) }));
  }
  const { value, metadata } = await c.env.SNAPSHOTS.getWithMetadata<SnapshotMetadata>(snapshotKey(identityId), "text");
  if (value === null) {
    return problemResponse(
      problem("identity-not-found", {
        detail: "No passport with this identity id has been published. Check the id and the resolver address.",
      }),
    );
  }
  return new Response(value, {
    headers: {
      "content-type": "application/json; charset=utf-8",
      ...(metadata ? { etag: `"${metadata.digest}"` } : {}),
    },
  });
});
