import { env, exports } from "cloudflare:workers";
import { shardOfOrganisation } from "./shards.ts";
import { developmentToken, freshOrganisation } from "./tokens.ts";

export type Role = "owner" | "admin" | "editor" | "viewer";

/** A JSON response body; tests read it field by field and assert on the values. */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are explored ad hoc in assertions
export type Body = Record<string, any>;

/** A caller of the Dashboard API with a development token. */
export class Caller {
  constructor(
    readonly token: string,
    readonly subject: string,
    readonly organisation: string,
  ) {}

  static async create(role: Role = "owner", organisation = freshOrganisation(), subject?: string): Promise<Caller> {
    const who = subject ?? `user-${crypto.randomUUID()}`;
    const token = await developmentToken({ subject: who, organisation, role });
    const caller = new Caller(token, who, organisation);
    await caller.request("GET", "/v1/me"); // development tokens take effect on first use
    return caller;
  }

  request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return exports.default.fetch(`http://control.test${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  /** Sends `body` exactly as given, with the given content type. */
  raw(method: string, path: string, body: string, contentType: string): Promise<Response> {
    return exports.default.fetch(`http://control.test${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, "content-type": contentType },
      body,
    });
  }

  async json<T = Body>(method: string, path: string, body?: unknown, expected = 200): Promise<T> {
    const response = await this.request(method, path, body);
    const text = await response.text();
    if (response.status !== expected) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  }

  createPassport(body: Record<string, unknown> = {}): Promise<Body> {
    // An empty create is refused (a passport must be named or bound), so unnamed ones get a name here.
    const named =
      body.display_name === undefined && body.bindings === undefined ? { display_name: "Test passport" } : {};
    return this.json(
      "POST",
      "/v1/passports",
      { family: "api", organisation_id: this.organisation, ...named, ...body },
      201,
    );
  }
}

/** The public record as the resolver serves it right now. */
export async function resolve(identityId: string): Promise<{ status: number; record: Body }> {
  const response = await env.TEST_RESOLVER.fetch(`http://resolver.test/api/p/${identityId}.json`);
  return { status: response.status, record: await response.json() };
}

export function uniqueEndpoint(): string {
  return `https://${crypto.randomUUID().slice(0, 8)}.api.example.com/v1`;
}

/** Everything D1 holds for one organisation, for before/after comparison of refused writes. */
export async function organisationState(organisationId: string): Promise<string> {
  const queries = [
    ["SELECT * FROM organisations WHERE id = ?1 OR parent_id = ?1"],
    ["SELECT * FROM members WHERE organisation_id = ?1 ORDER BY subject"],
    ["SELECT * FROM passports WHERE organisation_id = ?1 ORDER BY id"],
    ["SELECT b.* FROM bindings b JOIN passports p ON p.id = b.passport_id WHERE p.organisation_id = ?1 ORDER BY b.id"],
    ["SELECT e.* FROM evidence e JOIN passports p ON p.id = e.passport_id WHERE p.organisation_id = ?1 ORDER BY e.id"],
    ["SELECT a.* FROM authority a JOIN passports p ON p.id = a.passport_id WHERE p.organisation_id = ?1 ORDER BY a.id"],
    ["SELECT * FROM events WHERE organisation_id = ?1 ORDER BY seq"],
    ["SELECT o.* FROM outbox o JOIN passports p ON p.id = o.passport_id WHERE p.organisation_id = ?1"],
  ];
  const shard = await shardOfOrganisation(organisationId);
  const results = await Promise.all(
    queries.map(
      async ([sql]) =>
        (
          await shard
            .prepare(sql as string)
            .bind(organisationId)
            .all()
        ).results,
    ),
  );
  return JSON.stringify(results);
}
