import { base64url } from "jose";
import { Refusal } from "../failures.ts";

export interface Position {
  createdAt: string;
  id: string;
}

/** Opaque list cursor: the (created_at, id) of the last item returned, base64url-encoded. */
export function encodeCursor(position: Position): string {
  return base64url.encode(JSON.stringify([position.createdAt, position.id]));
}

export function decodeCursor(cursor: string): Position {
  try {
    const [createdAt, id] = JSON.parse(new TextDecoder().decode(base64url.decode(cursor))) as unknown[];
    if (typeof createdAt === "string" && typeof id === "string") return { createdAt, id };
  } catch {}
  throw new Refusal("invalid-request", { detail: "The cursor is not one this API returned." });
}

/**
 * Opaque search cursor: the `seq` and shard of the last item returned (db/passport-pages.ts); a
 * list cursor is not one. A cursor without a shard (from before sharding) still reads.
 */
export function encodeSearchCursor(position: { seq: number; shard: number }): string {
  return base64url.encode(JSON.stringify({ after: position.seq, shard: position.shard }));
}

export function decodeSearchCursor(cursor: string): { seq: number; shard?: number } {
  const isCount = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
  try {
    const { after, shard } = JSON.parse(new TextDecoder().decode(base64url.decode(cursor))) as {
      after?: unknown;
      shard?: unknown;
    };
    if (isCount(after) && shard === undefined) return { seq: after };
    if (isCount(after) && isCount(shard)) return { seq: after, shard };
  } catch {}
  throw new Refusal("invalid-request", { detail: "The cursor is not one this API returned for a search." });
}
