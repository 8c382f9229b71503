import { isIdentityId, LIFECYCLE_STATUSES, PASSPORT_FAMILIES, type Problem } from "@passport/domain";
import type { Context } from "hono";
import type { z } from "zod";
import type { PassportSummary } from "../api/views.ts";
import type { DashboardApi } from "./api.ts";
import type { UiEnv } from "./context.ts";
import { Layout, ProblemMessage, Time } from "./layout.tsx";

type Summary = z.infer<typeof PassportSummary>;
export interface OrganisationItem {
  id: string;
  name: string;
  parent_id: string | null;
  role: "owner" | "admin" | "editor" | "viewer";
}

const PAGE_SIZE = 25;

interface Filters {
  family?: string;
  status?: string;
  environment?: string;
  organisation?: string;
  q?: string;
}

function readFilters(c: Context<UiEnv>): Filters {
  const pick = (name: string) => c.req.query(name)?.trim() || undefined;
  return {
    family: pick("family"),
    status: pick("status"),
    environment: pick("environment"),
    organisation: pick("organisation"),
    q: pick("q"),
  };
}

function apiQuery(filters: Filters, limit: number, cursor?: string): string {
  const query = new URLSearchParams({ limit: String(limit) });
  if (filters.family) query.set("family", filters.family);
  if (filters.status) query.set("lifecycle", filters.status);
  if (filters.environment) query.set("environment", filters.environment);
  if (filters.organisation) query.set("organisation_id", filters.organisation);
  if (filters.q) query.set("q", filters.q);
  if (cursor) query.set("cursor", cursor);
  return `/v1/passports?${query}`;
}

function pageLink(filters: Filters, extra: Record<string, string>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) if (value) query.set(key, value);
  for (const [key, value] of Object.entries(extra)) query.set(key, value);
  return `/dashboard/passports?${query}`;
}

type Page = { items: Summary[]; next?: string } | { problem: Problem };

/**
 * One API page (cursor pagination). With a search text the API searches server-side
 * (`GET /v1/passports?q=`), so every passport the caller may see is searched, at the cost of one page.
 */
async function loadPage(api: DashboardApi, filters: Filters, cursor?: string): Promise<Page> {
  const page = await api.call<{ items: Summary[]; next_cursor: string | null }>(apiQuery(filters, PAGE_SIZE, cursor));
  if (!page.ok) return { problem: page.problem };
  return { items: page.body.items, next: page.body.next_cursor ?? undefined };
}

function Select(props: { id: string; label: string; value?: string; options: readonly string[] | [string, string][] }) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <select id={props.id} name={props.id}>
        <option value="">Any</option>
        {props.options.map((option) => {
          const [value, text] = Array.isArray(option) ? option : [option, option];
          return (
            <option value={value} selected={props.value === value}>
              {text}
            </option>
          );
        })}
      </select>
    </div>
  );
}

export async function passportListPage(c: Context<UiEnv>) {
  const api = c.get("api");
  const filters = readFilters(c);
  // A pasted identity id goes straight to its passport.
  if (filters.q && isIdentityId(filters.q)) {
    const found = await api.call(`/v1/passports/${filters.q}`);
    if (found.ok) return c.redirect(`/dashboard/passports/${filters.q}`, 303);
  }
  const organisations = await api.call<{ items: OrganisationItem[] }>("/v1/organisations");
  const orgs = organisations.ok ? organisations.body.items : [];
  const names = new Map(orgs.map((o) => [o.id, o.name]));
  const cursor = c.req.query("cursor");
  const page = await loadPage(api, filters, cursor);
  const filtered = Object.values(filters).some(Boolean);
  const paged = Boolean(cursor);

  return c.html(
    <Layout title="Passports" viewer={c.get("viewer")}>
      <h1>Passports</h1>
      <search aria-label="Find passports">
        <form method="get" action="/dashboard/passports" class="panel">
          <div class="row">
            <div class="grow">
              <label for="q">Search</label>
              <input
                id="q"
                name="q"
                type="search"
                value={filters.q ?? ""}
                aria-describedby="q-hint"
                placeholder="name, identity id, binding, environment or version"
              />
              <p class="hint" id="q-hint">
                Finds words that start with what you type. A full identity id opens that passport.
              </p>
            </div>
            <Select id="family" label="Family" value={filters.family} options={PASSPORT_FAMILIES} />
            <Select id="status" label="Status" value={filters.status} options={LIFECYCLE_STATUSES} />
            <div>
              <label for="environment">Environment</label>
              <input id="environment" name="environment" value={filters.environment ?? ""} placeholder="production" />
            </div>
            {orgs.length > 1 ? (
              <Select
                id="organisation"
                label="Organisation"
                value={filters.organisation}
                options={orgs.map((o) => [o.id, o.name] as [string, string])}
              />
            ) : null}
          </div>
          <p class="actions">
            <button type="submit">Apply</button>
            {filtered ? (
              <a class="button secondary" href="/dashboard/passports">
                Clear filters
              </a>
            ) : null}
          </p>
        </form>
      </search>
      {"problem" in page ? (
        <ProblemMessage problem={page.problem} />
      ) : (
        <>
          <p role="status">
            {page.items.length === 0
              ? "No passports match."
              : `Showing ${page.items.length} passport${page.items.length === 1 ? "" : "s"}${paged ? " (later page)" : ""}.`}
          </p>
          {page.items.length > 0 ? (
            <div class="table-wrap">
              <table class="stack">
                <caption class="sr-only">Passports</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Identity id</th>
                    <th scope="col">Family</th>
                    <th scope="col">Organisation</th>
                    <th scope="col">Status</th>
                    <th scope="col">Environment</th>
                    <th scope="col">Updated</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((p) => (
                    <tr>
                      <td data-label="Name">
                        <a href={`/dashboard/passports/${p.identity_id}`}>{p.display_name ?? p.identity_id}</a>
                      </td>
                      <td data-label="Identity id">
                        <code>{p.identity_id}</code>
                      </td>
                      <td data-label="Family">{p.family}</td>
                      <td data-label="Organisation">{names.get(p.organisation_id) ?? p.organisation_id}</td>
                      <td data-label="Status">
                        <span class={`badge s-${p.state.lifecycle}`}>{p.state.lifecycle}</span>
                      </td>
                      <td data-label="Environment">
                        {[p.state.environment, p.state.version].filter(Boolean).join(" · ") || "—"}
                      </td>
                      <td data-label="Updated">
                        <Time at={p.updated_at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
          <nav class="pager" aria-label="Pages">
            {paged ? <a href={pageLink(filters, {})}>First page</a> : null}
            {page.next ? (
              <a href={pageLink(filters, { cursor: page.next })} rel="next">
                Next page
              </a>
            ) : null}
          </nav>
        </>
      )}
    </Layout>,
    "problem" in page ? (page.problem.status as 400) : 200,
  );
}
