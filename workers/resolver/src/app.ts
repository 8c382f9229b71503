import { problem, problemResponse } from "@passport/domain";
import { Hono } from "hono";
import { passports } from "./routes/passports.ts";

export const app = new Hono<{ Bindings: Env }>();

app.get("/health", (c) => c.json({ status: "ok" }));
app.route("/api/p", passports);

app.notFound((c) =>
  problemResponse(problem("route-not-found", { detail: `Nothing is served at ${new URL(c.req.url).pathname}.` })),
);

app.onError((error) => {
  console.error(JSON.stringify({ level: "error", event: "unhandled", message: String(error) }));
  return problemResponse(problem("internal", { detail: "The resolver could not answer; try again." }));
});
