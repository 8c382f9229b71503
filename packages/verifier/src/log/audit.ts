import { decodeBundle, decodeEntry, type Hash, type LogEntry, leafHash, sameHash } from "@passport/protocol";
import { fetchHistory } from "../history.ts";
import type { HttpPolicy } from "../http.ts";
import type { CheckpointView, LogFinding, NetworkFailureKind } from "../outcome.ts";
import { acceptCheckpoint, type CheckpointStore } from "./checkpoint.ts";
import { type LogClient, LogFetchError } from "./client.ts";
import { Tampered, TileAudit } from "./tile-audit.ts";

const WIDTH = 256;

/** A logged entry that the published history does not bear out. */
export interface AuditMismatch {
  index: number;
  identity_id?: string;
  record_version?: number;
  /** `undecodable` (not a v1 entry), `no_history` (the resolver has no history for the passport), `not_in_history` (no such version), `digest_mismatch`. */
  problem: "undecodable" | "no_history" | "not_in_history" | "digest_mismatch";
  logged_digest?: string;
  published_digest?: string;
}

export interface AuditReport {
  /** `ok`; `history_mismatch` (entries the history does not bear out); `log_tampered`; a checkpoint failure; `network_failure`. */
  outcome: "ok" | "history_mismatch" | "network_failure" | LogFinding["outcome"];
  ok: boolean;
  log: string;
  reason: string;
  checkpoint?: CheckpointView;
  /** The range audited, `[from, to)`, clipped to the checkpoint's size. */
  range?: { from: number; to: number };
  entries_checked: number;
  passports_checked: number;
  /** Hash tiles read and checked against the signed root. */
  tiles_checked: number;
  bundles_checked: number;
  /** For `log_tampered`: the tile or bundle that is not the signed tree's. */
  tampered?: { tile: string; detail: string };
  mismatches: AuditMismatch[];
  /** For a checkpoint failure: its details (see the verifier's outcomes of the same name). */
  finding?: Omit<LogFinding, "relied_on">;
  /** For `network_failure`. */
  network?: { url: string; kind: NetworkFailureKind; status?: number; detail: string };
}

export interface AuditOptions {
  resolver: string;
  http: HttpPolicy;
  from?: number;
  to?: number;
  store?: CheckpointStore;
  now: number;
  signal?: AbortSignal;
}

/**
 * `passport log`: audits entries `[from, to)` of the log. Verifies the checkpoint (and advances
 * the remembered one), re-derives its root from the tiles, checks every tile and entry bundle the
 * range needs against it, then checks each entry's digest against the passport's published
 * history.
 */
export async function auditLog(client: LogClient, options: AuditOptions): Promise<AuditReport> {
  const report: AuditReport = {
    outcome: "ok",
    ok: true,
    log: client.origin,
    reason: "",
    entries_checked: 0,
    passports_checked: 0,
    tiles_checked: 0,
    bundles_checked: 0,
    mismatches: [],
  };
  const finish = (outcome: AuditReport["outcome"], reason: string, extra: Partial<AuditReport> = {}) =>
    Object.assign(report, { outcome, ok: outcome === "ok", reason, ...extra });
  let tileAudit: TileAudit | undefined;
  try {
    const accepted = await acceptCheckpoint(client, options.store, options.now, options.signal);
    if (!accepted.ok && "behind" in accepted) {
      const { rememberedSize, rememberedTime, offered } = accepted.behind;
      return finish(
        "checkpoint_stale",
        `The log served a tree of ${offered.size} entries, smaller than the ${rememberedSize} accepted at ${rememberedTime}, within the time a cached checkpoint may lag (docs/freshness.md). Audit again shortly.`,
        { checkpoint: offered },
      );
    }
    if (!accepted.ok) {
      return finish(accepted.finding.outcome, accepted.finding.reason, {
        finding: { ...accepted.finding, log: client.origin } as Omit<LogFinding, "relied_on">,
      });
    }
    const { checkpoint } = accepted;
    report.checkpoint = accepted.view;
    const to = Math.min(options.to ?? checkpoint.size, checkpoint.size);
    const from = Math.min(options.from ?? 0, to);
    report.range = { from, to };

    tileAudit = new TileAudit(client.tiles(checkpoint.size, options.signal));
    await tileAudit.root(checkpoint.rootHash);
    const entries: { index: number; entry: LogEntry | undefined }[] = [];
    for (let n = Math.floor(from / WIDTH); n * WIDTH < to; n++) {
      const leaves = await tileAudit.leaves(n);
      const { path, bytes } = await client.fetchBundle(checkpoint.size, n, options.signal);
      const bundle = decodeBundle(bytes);
      if (!bundle || bundle.length !== leaves.length) {
        throw new Tampered(path, `${path} does not hold ${leaves.length} well-formed entries`);
      }
      for (const [offset, entry] of bundle.entries()) {
        if (!sameHash(await leafHash(entry), leaves[offset] as Hash)) {
          throw new Tampered(path, `entry ${n * WIDTH + offset} of ${path} does not hash to its leaf in the tiles`);
        }
        const index = n * WIDTH + offset;
        if (index >= from && index < to) entries.push({ index, entry: decodeEntry(entry) });
      }
      report.bundles_checked++;
    }
    report.tiles_checked = tileAudit.count;
    report.entries_checked = entries.length;

    const byPassport = new Map<string, { index: number; entry: LogEntry }[]>();
    for (const { index, entry } of entries) {
      if (!entry) {
        report.mismatches.push({ index, problem: "undecodable" });
        continue;
      }
      byPassport.set(entry.identityId, [...(byPassport.get(entry.identityId) ?? []), { index, entry }]);
    }
    for (const [identityId, logged] of byPassport) {
      report.passports_checked++;
      const history = await fetchHistory(options.resolver, identityId, options.http, options.signal);
      if (!history.ok && history.status !== 404) {
        const { url, kind, status, detail } = history;
        return finish("network_failure", "The published history could not be read; the audit is incomplete.", {
          network: { url, kind, ...(status ? { status } : {}), detail },
        });
      }
      const published = new Map(history.ok ? history.entries.map((e) => [e.record_version, e.digest]) : []);
      for (const { index, entry } of logged) {
        const base = {
          index,
          identity_id: identityId,
          record_version: entry.recordVersion,
          logged_digest: entry.digest,
        };
        const digest = published.get(entry.recordVersion);
        if (!history.ok) report.mismatches.push({ ...base, problem: "no_history" });
        else if (digest === undefined) report.mismatches.push({ ...base, problem: "not_in_history" });
        else if (digest !== entry.digest) {
          report.mismatches.push({ ...base, problem: "digest_mismatch", published_digest: digest });
        }
      }
    }
    report.mismatches.sort((a, b) => a.index - b.index);
    if (report.mismatches.length > 0) {
      return finish(
        "history_mismatch",
        `${report.mismatches.length} of ${report.entries_checked} logged entries are not borne out by the published histories.`,
      );
    }
    return finish(
      "ok",
      `Entries ${from} to ${to - 1} are in the signed tree and match the published histories of ${report.passports_checked} passports.`,
    );
  } catch (error) {
    if (tileAudit) report.tiles_checked = tileAudit.count;
    if (error instanceof Tampered) {
      return finish("log_tampered", `The log serves ${error.tile}, which is not part of its signed tree.`, {
        tampered: { tile: error.tile, detail: error.message },
      });
    }
    if (error instanceof LogFetchError) {
      const { kind, status, detail } = error.failure;
      return finish("network_failure", "The log could not be read; the audit is incomplete.", {
        network: { url: error.url, kind, ...(status ? { status } : {}), detail },
      });
    }
    throw error;
  }
}
