import {
  describeIdentityIdDefect,
  identityIdDefect,
  type PassportRecord,
  PROBLEM_TYPE_BASE,
  PROBLEMS,
  type ProblemKind,
} from "@passport/domain";
import { Hono } from "hono";
import type { JSX } from "hono/jsx/jsx-runtime";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_HEADERS } from "../http.ts";
import { lookUp, NOT_FOUND_DETAIL, UNAVAILABLE_DETAIL } from "../published-snapshots.ts";
import { PAGE_SECURITY_HEADERS, ProblemPage } from "../views/layout.tsx";
import { HomePage, PassportPage } from "../views/passport.tsx";

export const pages = new Hono<{ Bindings: Env }>();

async function htmlAnswer(element: JSX.Element, status: number, headers: Record<string, string>): Promise<Response> {
  return new Response(`<!doctype html>${await element}`, {
    status,
    headers: { ...CORS_HEADERS, ...PAGE_SECURITY_HEADERS, ...headers, "content-type": "text/html; charset=utf-8" },
  });
}

function problemPage(kind: ProblemKind, detail: string, headers: Record<string, string>): Promise<Response> {
  const { status, title } = PROBLEMS[kind];
  return htmlAnswer(<ProblemPage title={title} detail={detail} type={PROBLEM_TYPE_BASE + kind} />, status, headers);
}

pages.get("/", () => htmlAnswer(<HomePage />, 200, cacheHeaders("short")));

// The home page's form submits here; the answer always lives at /p/{id}.
pages.get("/p", (c) => {
  const id = c.req.query("id")?.trim();
  return new Response(null, {
    status: 303,
    headers: { ...CORS_HEADERS, ...cacheHeaders("none"), location: id ? `/p/${encodeURIComponent(id)}` : "/" },
  });
});

pages.get("/p/:id", async (c) => {
  const identityId = c.req.param("id");
  const defect = identityIdDefect(identityId);
  if (defect) {
    return problemPage(
      "malformed-identity-id",
      `This is not a well-formed identity id: ${describeIdentityIdDefect(defect)}.`,
      cacheHeaders("stable"),
    );
  }
  const found = await lookUp(c.env.SNAPSHOTS, identityId);
  switch (found.kind) {
    case "unknown":
      return problemPage("identity-not-found", NOT_FOUND_DETAIL, cacheHeaders("identity", identityId));
    case "unavailable":
      return problemPage("unavailable", UNAVAILABLE_DETAIL, { ...cacheHeaders("none"), "retry-after": "5" });
  }
  // Validated against PassportRecord when it was published; parsing is all the page needs.
  const record = JSON.parse(found.snapshot.body) as PassportRecord;
  const jsonUrl = `${c.env.PUBLIC_BASE_URL}/api/p/${identityId}.json`;
  return htmlAnswer(
    <PassportPage record={record} jsonUrl={jsonUrl} now={Date.now()} />,
    200,
    cacheHeaders("identity", identityId),
  );
});
