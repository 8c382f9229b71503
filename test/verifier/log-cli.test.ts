import { describe, expect, it } from "vitest";
import { EXIT } from "../../packages/verifier/src/cli/args.ts";
import { run } from "../../packages/verifier/src/cli/main.ts";
import type { FetchLike } from "../../packages/verifier/src/index.ts";
import { LOG_ORIGIN, LOG_RESOLVER, LogResolver, noteSigner } from "./log-support.ts";
import { NOW } from "./support.ts";

/** A log of 300 entries: passport `a` in three versions, and others. */
async function world() {
  const log = await LogResolver.create();
  const a = (await log.publish()).record.identity_id;
  log.filler(100);
  await log.publish(a);
  const b = (await log.publish()).record.identity_id;
  log.filler(100);
  await log.publish(a);
  log.filler(96);
  return { log, a, b };
}

/** The CLI over an in-memory file system holding the pinned record keys and the log key. */
function cli(log: LogResolver) {
  const files = new Map<string, string>([
    ["keys.json", JSON.stringify(log.records.jwks)],
    ["log.key", `${log.key.verifierKey}\n`],
  ]);
  let fetch: FetchLike = log.fetch;
  const passport = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(args, {
      stdout: (text) => out.push(text),
      stderr: (text) => err.push(text),
      env: { PASSPORT_RESOLVER: LOG_RESOLVER },
      fetch: (input, init) => fetch(input, init),
      now: () => NOW,
      readFile: async (path) => {
        const text = files.get(path);
        if (text === undefined) throw new Error("ENOENT");
        return text;
      },
      writeFile: async (path, text) => {
        files.set(path, text);
      },
    });
    return { code, stdout: out.join("\n"), stderr: err.join("\n") };
  };
  return { passport, files, use: (other: LogResolver) => (fetch = other.fetch) };
}

describe("passport verify --log", () => {
  it("exit 0 for the newest version, with the log line; the checkpoint is remembered in the state file", async () => {
    const { log, a } = await world();
    const { passport, files } = cli(log);
    const result = await passport("verify", a, "--jwks", "keys.json", "--log", "log.key", "--log-state", "state.json");
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout).toContain(`Log:        entry 203 included in checkpoint 300 of ${LOG_ORIGIN}`);
    expect(result.stdout).toContain("remembered checkpoint: first");
    expect(JSON.parse(files.get("state.json") ?? "{}")).toMatchObject({ checkpoints: { [LOG_ORIGIN]: { size: 300 } } });
  });

  it("exit 4 for a replay, a split view against the state file, and a checkpoint not signed by the pinned key", async () => {
    const { log, a } = await world();
    const { passport, use } = cli(log);
    const args = ["verify", a, "--jwks", "keys.json", "--log", log.key.verifierKey, "--log-state", "state.json"];
    expect((await passport(...args)).code).toBe(EXIT.ok);

    log.serving.set(a, 2);
    const replay = await passport(...args, "--json");
    expect(replay.code).toBe(EXIT.proof);
    expect(JSON.parse(replay.stdout)).toMatchObject({ outcome: "not_newest", newer_version: 3 });

    const other = log.fork();
    other.entries[3] = { ...(other.entries[3] as (typeof other.entries)[number]), digest: "sha-256:other" };
    use(other);
    const split = await passport(...args);
    expect(split.code).toBe(EXIT.proof);
    expect(split.stdout).toMatch(/^FAIL\s+split_view/);

    const stranger = await LogResolver.create();
    const forged = await passport("verify", a, "--jwks", "keys.json", "--log", stranger.key.verifierKey);
    expect(forged.code).toBe(EXIT.proof);
    expect(forged.stdout).toMatch(/^FAIL\s+checkpoint_invalid/);
    expect(forged.stderr).toContain("checkpoints are not remembered");
  });

  it("exit 1 when the checkpoint is older than --log-max-age, the scan bound is hit, or the record is newer than the checkpoint", async () => {
    const { log, a } = await world();
    const { passport } = cli(log);
    log.serveCheckpoint({ time: NOW - 3600_000 });
    const stale = await passport("verify", a, "--jwks", "keys.json", "--log", "log.key", "--log-max-age", "30m");
    expect(stale.code).toBe(EXIT.failed);
    expect(stale.stdout).toMatch(/^FAIL\s+checkpoint_stale/);
    log.serveCheckpoint({});
    const bounded = await passport("verify", a, "--jwks", "keys.json", "--log", "log.key", "--log-scan", "0");
    expect(bounded.code).toBe(EXIT.failed);
    expect(bounded.stdout).toMatch(/^FAIL\s+newest_unverified/);
    // Published after the newest checkpoint: not provable yet, no evidence against it.
    const fresh = (await log.publish()).record.identity_id;
    log.serveCheckpoint({ size: log.entries.length - 1 });
    const pending = await passport("verify", fresh, "--jwks", "keys.json", "--log", "log.key");
    expect(pending.code).toBe(EXIT.failed);
    expect(pending.stdout).toMatch(/^FAIL\s+not_in_log/);
  });

  it("--witness and --witness-quorum: exit 0 when enough configured witnesses cosigned, 4 when not", async () => {
    const { log, a } = await world();
    const { passport, files } = cli(log);
    const [one, two] = [await noteSigner("witness-one.example"), await noteSigner("witness-two.example")];
    files.set("one.key", one.verifierKey);
    log.serveCheckpoint({ witnesses: [one] });
    const args = ["verify", a, "--jwks", "keys.json", "--log", "log.key", "--witness", "one.key"];
    const met = await passport(...args, "--witness", two.verifierKey, "--witness-quorum", "1");
    expect(met.code).toBe(EXIT.ok);
    expect(met.stdout).toContain("cosigned by witness-one.example");
    const unmet = await passport(...args, "--witness", two.verifierKey);
    expect(unmet.code).toBe(EXIT.proof);
    expect(unmet.stdout).toMatch(/^FAIL\s+witness_quorum_unmet/);
    expect(unmet.stdout).toContain("Witnesses:  1 of 2 required (witness-one.example)");
  });

  it("refuses a state file it cannot read as remembered checkpoints (exit 2), rather than forgetting them", async () => {
    const { log, a } = await world();
    const { passport, files } = cli(log);
    files.set("state.json", "{ not json");
    const result = await passport("verify", a, "--jwks", "keys.json", "--log", "log.key", "--log-state", "state.json");
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toContain("state.json is not a remembered-checkpoint file");
  });

  it.each([
    [["verify", "psp_x", "--jwks", "keys.json", "--log-scan", "5"], "--log-scan needs --log"],
    [["verify", "psp_x", "--jwks", "keys.json", "--log", "nokey"], "neither a verifier key"],
    [["verify", "psp_x", "--jwks", "keys.json", "--log", "log.key", "--witness-quorum", "1"], "more than the 0"],
    [["log"], "log needs --log"],
    [["log", "--log", "log.key", "--from", "5", "--to", "2"], "--from must not be after --to"],
    [["log", "--log", "log.key", "--family", "api"], "--family does not apply to log"],
    [["resolve", "psp_x", "--jwks", "keys.json", "--from", "1"], "--from applies to log only"],
  ])("usage: %j -> %s (exit 2)", async (args, message) => {
    const { log } = await world();
    const result = await cli(log).passport(...args);
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toContain(message);
  });
});

describe("passport log", () => {
  it("audits the whole log: every entry in the signed tree and in its passport's history (exit 0)", async () => {
    const { log } = await world();
    const result = await cli(log).passport("log", "--log", "log.key", "--json");
    expect(result.code).toBe(EXIT.ok);
    expect(JSON.parse(result.stdout)).toMatchObject({
      outcome: "ok",
      range: { from: 0, to: 300 },
      entries_checked: 300,
      bundles_checked: 2,
      mismatches: [],
    });
  });

  it("names a tampered tile and a tampered bundle (exit 4)", async () => {
    const { log } = await world();
    const { passport } = cli(log);
    const tile = (await log.tiles()).get("tile/0/000") as Uint8Array;
    log.tampered.set(
      "tile/0/000",
      tile.map((byte, i) => (i === 100 ? byte ^ 1 : byte)),
    );
    const tampered = await passport("log", "--log", "log.key", "--from", "10", "--to", "20");
    expect(tampered.code).toBe(EXIT.proof);
    expect(tampered.stdout).toMatch(/^FAIL\s+log_tampered/);
    expect(tampered.stdout).toContain(
      "Tampered:   tile/0/000: tile/0/000 does not hash to its entry in tile/1/000.p/1",
    );

    log.tampered.clear();
    const bundle = (await log.tiles()).get("tile/entries/001.p/44") as Uint8Array;
    log.tampered.set(
      "tile/entries/001.p/44",
      bundle.map((byte, i) => (i === 30 ? byte ^ 1 : byte)),
    );
    const entries = JSON.parse((await passport("log", "--log", "log.key", "--json", "--from", "250")).stdout);
    expect(entries).toMatchObject({ outcome: "log_tampered", tampered: { tile: "tile/entries/001.p/44" } });
    // A range that needs neither passes.
    expect((await passport("log", "--log", "log.key", "--to", "200")).code).toBe(EXIT.ok);
  });

  it("reports logged entries the published history does not bear out (exit 4)", async () => {
    const { log, a } = await world();
    log.historyUpTo.set(a, 1);
    const result = await cli(log).passport("log", "--log", "log.key");
    expect(result.code).toBe(EXIT.proof);
    expect(result.stdout).toMatch(/^FAIL\s+history_mismatch/);
    expect(result.stdout).toContain(`Mismatch:   entry 101 ${a} v2: not_in_history`);
    expect(result.stdout).toContain(`Mismatch:   entry 203 ${a} v3: not_in_history`);
  });
});
