import { HttpProblem } from "./problem.ts";

export interface Position {
  createdAt: string;
  id: string;
}

/** Opaque list cursor: the (created_at, id) of the last item returned, base64url-encoded. */
export function encodeCursor(position: Position): string {
  return btoa(JSON.stringify([position.createdAt, position.id]))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

export function decodeCursor(cursor: string): Position {
  try {
    const [createdAt, id] = JSON.parse(atob(cursor.replace(/-/g, "+").replace(/_/g, "/"))) as unknown[];
    if (typeof createdAt === "string" && typeof id === "string") return { createdAt, id };
  } catch {}
  throw new HttpProblem("invalid-request", { detail: "The cursor is not one this API returned." });
}
