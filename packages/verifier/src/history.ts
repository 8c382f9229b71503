import { fetchWithRetry, type HttpPolicy, readFailureKind, readProblem, readStrictJson } from "./http.ts";
import type { NetworkFailureKind } from "./outcome.ts";
import type { HistoryEntryView } from "./proof.ts";

/** Entries asked for per request: the resolver's maximum page. */
const PAGE_LIMIT = 1000;
/** Stops a resolver that keeps answering `next` from holding the verifier forever. */
const MAX_PAGES = 1000;

export type HistoryAnswer =
  | { ok: true; entries: HistoryEntryView[]; attempts: number }
  | {
      ok: false;
      url: string;
      kind: NetworkFailureKind;
      attempts: number;
      status?: number;
      problem_type?: string;
      detail: string;
    };

function isEntry(value: unknown, identityId: string): value is HistoryEntryView {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  return (
    e.identity_id === identityId &&
    Number.isInteger(e.record_version) &&
    typeof e.digest === "string" &&
    (e.previous_digest === undefined || typeof e.previous_digest === "string") &&
    typeof e.published_at === "string" &&
    Array.isArray(e.change_kinds) &&
    e.change_kinds.every((k) => typeof k === "string") &&
    typeof e.signature === "string"
  );
}

/**
 * Reads a passport's whole published history from `{resolver}/api/p/{id}/history.json`, page by
 * page. The next page is always asked of the same resolver with `after` = the last version read;
 * the `next` address in the answer only says whether there is one. Entries are kept exactly as
 * served, because their signatures cover every member.
 * @example
 * const answer = await fetchHistory("https://resolver.example", id, verifier.http);
 * if (answer.ok) answer.entries.at(-1)?.record_version;
 */
export async function fetchHistory(
  resolver: string,
  identityId: string,
  http: HttpPolicy,
  signal?: AbortSignal,
): Promise<HistoryAnswer> {
  const entries: HistoryEntryView[] = [];
  let attempts = 0;
  let after = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = `${resolver}/api/p/${encodeURIComponent(identityId)}/history.json?after=${after}&limit=${PAGE_LIMIT}`;
    const unusable = (
      detail: string,
      status?: number,
      kind: NetworkFailureKind = "unexpected_response",
    ): HistoryAnswer => ({
      ok: false,
      url,
      kind,
      attempts,
      ...(status ? { status } : {}),
      detail,
    });
    const answer = await fetchWithRetry(url, { headers: { accept: "application/json" } }, http, signal);
    attempts += answer.attempts;
    if (!answer.ok) {
      const { ok: _, problemType, attempts: __, ...failure } = answer;
      return { ok: false, url, attempts, ...failure, ...(problemType ? { problem_type: problemType } : {}) };
    }
    const { response } = answer;
    if (response.status !== 200) {
      const problem = await readProblem(response);
      return {
        ...(unusable(
          `the resolver answered ${response.status}${problem.type ? ` ${problem.type}` : ""} for the history; it may not serve one`,
          response.status,
        ) as Extract<HistoryAnswer, { ok: false }>),
        ...(problem.type ? { problem_type: problem.type } : {}),
      };
    }
    const read = await readStrictJson(response, http.maxBytes);
    if (!read.ok) return unusable(`the history answer is not usable: ${read.problem}`, 200, readFailureKind(read));
    const body = read.value as { entries?: unknown; next?: unknown } | null;
    if (!Array.isArray(body?.entries)) return unusable("the history answer has no entries list", 200);
    for (const entry of body.entries) {
      if (!isEntry(entry, identityId)) return unusable("a history entry is not usable", 200);
      entries.push(entry);
    }
    const last = entries.at(-1);
    if (typeof body.next !== "string" || body.entries.length === 0 || !last) return { ok: true, entries, attempts };
    // The order within the history is checked with the chain; here only that paging moves on.
    if (last.record_version <= after) return unusable("the history's next page does not move past the last one", 200);
    after = last.record_version;
  }
  return {
    ok: false,
    url: `${resolver}/api/p/${encodeURIComponent(identityId)}/history.json`,
    kind: "unexpected_response",
    attempts,
    detail: `the history did not end within ${MAX_PAGES} pages`,
  };
}
