// `npm start` keeps its local state across restarts (docs/local-development.md): every D1 shard,
// the directory and KV persist under the state directory, and a start migrates each shard and the
// directory again without touching their rows. Two starts on one state directory: the second
// answers a passport the first created and the demo passports the first seeded, each from its
// organisation's shard as the directory places it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type ServiceInfo, startService, stopService } from "../local-service.ts";

/** Two starts one after the other, each up to the project's start-up bound (hookTimeout, 240 s). */
const TWO_STARTS_MS = 480_000;
const stateDir = mkdtempSync(join(tmpdir(), "passport-restart-"));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

type Passport = { identity_id: string; display_name: string; organisation: { id: string } };

async function api<T>(info: ServiceInfo, method: string, path: string, body?: unknown, expected = 200): Promise<T> {
  const response = await fetch(`${info.control}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${info.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

describe("npm start, stopped and started again on its state", () => {
  it(
    "keeps every shard's and the directory's rows: the passports of the first start are answered by the second",
    async () => {
      const first = await startService({ stateDir });
      let created: Passport;
      try {
        created = await api<Passport>(
          first.info,
          "POST",
          "/v1/passports",
          { family: "api", display_name: "Kept across a restart" },
          201,
        );
      } finally {
        await stopService(first.child);
      }

      const second = await startService({ stateDir });
      try {
        // Seeded once: the second start finds the first's demo passports rather than making new ones.
        expect(second.info.demo.map((p) => p.id)).toEqual(first.info.demo.map((p) => p.id));
        const again = await api<Passport>(second.info, "GET", `/v1/passports/${created.identity_id}`);
        expect(again).toMatchObject({
          identity_id: created.identity_id,
          display_name: "Kept across a restart",
          organisation: { id: created.organisation.id },
        });
        for (const demo of second.info.demo) {
          expect((await api<Passport>(second.info, "GET", `/v1/passports/${demo.id}`)).display_name).toBe(demo.name);
        }
        const record = await fetch(`${second.info.resolver}/api/p/${created.identity_id}.json`);
        expect(record.status).toBe(200);
      } finally {
        await stopService(second.child);
      }
    },
    TWO_STARTS_MS,
  );
});
