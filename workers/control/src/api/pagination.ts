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

/** Opaque search cursor: the `seq` of the last item returned (a list cursor is not one). */
export function encodeSearchCursor(seq: number): string {
  return base64url.encode(JSON.stringify({ after: seq }));
}

export function decodeSearchCursor(cursor: string): number {
  try {
    const { after } = JSON.parse(new TextDecoder().decode(base64url.decode(cursor))) as { after?: unknown };
    if (typeof after === "number" && Number.isSafeInteger(after) && after >= 0) return after;
  } catch {}
  throw new Refusal("invalid-request", { detail: "The cursor is not one this API returned for a search." });
}
