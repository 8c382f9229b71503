import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../workers/control/src/app.ts";
import { openToken } from "../../workers/control/src/marketplace/crypto.ts";
import { AcquisitionMessage } from "../../workers/control/src/marketplace/messages.ts";
import { developmentToken } from "../support/tokens.ts";
import {
  api,
  claim,
  deliver,
  freshAccountId,
  handoff,
  parseLocation,
  subscribe,
  waitUntilFinished,
} from "./support.ts";

/** Every row of every table the control plane can read, as text. */
async function dumpD1(): Promise<string> {
  const tables = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
  ).all<{ name: string }>();
  expect(tables.results.map((t) => t.name)).toEqual(expect.arrayContaining(["acquisitions", "acquisition_stages"]));
  const dumps = await Promise.all(
    tables.results.map(async ({ name }) => {
      const rows = await env.DB.prepare(`SELECT * FROM "${name.replaceAll('"', '""')}"`).all();
      return `${name}:${JSON.stringify(rows.results)}`;
    }),
  );
  return dumps.join("\n");
}

/** Every key, value and metadata in the KV namespace the resolver serves from. */
async function dumpKv(): Promise<string> {
  const parts: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.SNAPSHOTS.list(cursor ? { cursor } : {});
    for (const key of page.keys) {
      const { value, metadata } = await env.SNAPSHOTS.getWithMetadata(key.name, "text");
      parts.push(key.name, value ?? "", JSON.stringify(metadata));
    }
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  expect(parts.length).toBeGreaterThan(0);
  return parts.join("\n");
}

function expectAbsent(haystack: string, token: string, where: string) {
  for (const form of [token, encodeURIComponent(token), token.replaceAll("+", " ")]) {
    expect(haystack.includes(form), `${where} contains the registration token`).toBe(false);
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the registration token", () => {
  it("appears nowhere in D1, KV, the redirect, response bodies or logs", { timeout: 30_000 }, async () => {
    const logged: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        logged.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
      });
    }
    const bodies: string[] = [];
    const user = await developmentToken();

    // A successful acquisition through the route and the real queue, with the message captured.
    const registration = await subscribe({ customer_aws_account_id: freshAccountId() });
    const token = registration.registration_token;
    const sent: unknown[] = [];
    const recordingQueue = {
      send: (body: unknown, options?: QueueSendOptions) => {
        sent.push(body);
        return env.ACQUISITIONS.send(body, options);
      },
      sendBatch: (messages: Iterable<MessageSendRequest>, options?: QueueSendBatchOptions) =>
        env.ACQUISITIONS.sendBatch(messages, options),
    };
    const form = new URLSearchParams({ "x-amzn-marketplace-token": token });
    const posted = await app.request(
      "http://control.test/marketplace/fulfill",
      { method: "POST", body: form, headers: { "content-type": "application/x-www-form-urlencoded" } },
      { ...env, ACQUISITIONS: recordingQueue },
    );
    expect(posted.status).toBe(303);
    const location = posted.headers.get("location") ?? "";
    bodies.push(await posted.text());
    const { acquisitionId, claimReference } = parseLocation(location);
    expect((await waitUntilFinished(acquisitionId)).status).toBe("completed");

    // The token did travel in the message, but only sealed.
    expect(sent).toHaveLength(1);
    const message = AcquisitionMessage.parse(sent[0]);
    expectAbsent(JSON.stringify(message), token, "the queue message");
    expect(await openToken(env.MARKETPLACE_TOKEN_ENCRYPTION_KEY, acquisitionId, message.sealed_token)).toBe(token);

    for (const response of [
      await api(user, "GET", `/v1/acquisitions/${acquisitionId}`, undefined, { "x-claim-reference": claimReference }),
      await claim(user, acquisitionId, claimReference),
      await api(user, "GET", `/v1/acquisitions/${acquisitionId}`),
    ]) {
      expect(response.status).toBe(200);
      bodies.push(await response.text());
    }

    // Failure paths log and record errors: a token the marketplace refuses, and one posted malformed.
    const expired = await subscribe({ customer_aws_account_id: freshAccountId(), scenario: "expired" });
    const failing = await handoff(expired.registration_token);
    await deliver(failing.message);
    bodies.push(
      await (
        await api(user, "GET", `/v1/acquisitions/${failing.acquisitionId}`, undefined, {
          "x-claim-reference": failing.claimReference,
        })
      ).text(),
    );
    const malformed = await app.request(
      "http://control.test/marketplace/fulfill",
      {
        method: "POST",
        body: new URLSearchParams({ "x-amzn-marketplace-token": `${token}!` }),
        headers: { accept: "text/html" },
      },
      env,
    );
    expect(malformed.status).toBe(400);
    bodies.push(await malformed.text());

    expectAbsent(location, token, "the redirect");
    expectAbsent(bodies.join("\n"), token, "a response body");
    expectAbsent(await dumpD1(), token, "D1");
    expectAbsent(await dumpKv(), token, "KV");
    expect(logged.some((line) => line.includes(acquisitionId))).toBe(true);
    expectAbsent(logged.join("\n"), token, "the logs");
    expectAbsent(logged.join("\n"), expired.registration_token, "the logs");
  });
});
