/**
 * A history of the REAL control plane, recorded: a seeded sequence of creates, changes,
 * suspensions, revocations, republishes, log passes and KV write outages (always at least one
 * suspension, one reactivation and one revocation) runs through the
 * Dashboard API, the publication sequencers and the TransparencyLog object in workerd, and every
 * KV write they make is captured with its time (docs/propagation-model.md). The propagation model
 * then replays these writes to other locations.
 */
import { env } from "cloudflare:workers";
import { type FeedEntry, unwrap } from "@passport/domain";
import { transparencyLog } from "../../../workers/control/src/publication/log/append.ts";
import { drainOutbox } from "../../../workers/control/src/publication/publish.ts";
import { Caller } from "../../support/api.ts";
import type { KvWrite } from "./kv-model.ts";

type Lifecycle = "active" | "suspended" | "revoked";

/** What the control plane answered to a write: the authoritative state from then on. */
interface Answered {
  /** When the write's request was sent: its commit, from which the state holds, is no earlier. */
  at: number;
  identityId: string;
  version: number;
  lifecycle: Lifecycle;
}

export interface Trace {
  seed: number;
  writes: KvWrite[];
  answers: Answered[];
  /** Publications' purges, inferred from their feed writes (the purge follows them). */
  purges: { identityId: string; at: number }[];
  /** Operations run, for failure messages. */
  operations: string[];
  passports: string[];
}

/** mulberry32: a small seeded generator, so a trace is reproducible from its seed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type KvPut = (this: KVNamespace, key: string, value: unknown, options?: KVNamespacePutOptions) => Promise<void>;

/**
 * Runs `operations` steps against the control plane and records its KV writes. Every KV binding
 * of the isolate (the publication sequencers' and the log's) shares one prototype, so the
 * recording wraps `put` there for the duration; an outage makes those puts fail.
 */
export async function recordTrace(seed: number, operations: number): Promise<Trace> {
  const random = seeded(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const trace: Trace = { seed, writes: [], answers: [], purges: [], operations: [], passports: [] };
  const prototype = Object.getPrototypeOf(env.SNAPSHOTS) as { put: KvPut };
  const originalPut = prototype.put;
  let outage = false;
  prototype.put = async function (this: KVNamespace, key, value, options) {
    if (outage) throw new Error("KV write failed (modelled outage)");
    await originalPut.call(this, key, value, options);
    const stored =
      typeof value === "string"
        ? value
        : value instanceof ArrayBuffer
          ? new Uint8Array(value.slice(0))
          : new Uint8Array((value as Uint8Array).slice());
    const write: KvWrite = { key, value: stored, metadata: options?.metadata, at: Date.now() };
    trace.writes.push(write);
    const feedEntry = key.startsWith("feed:") ? (options?.metadata as FeedEntry | undefined) : undefined;
    if (feedEntry) trace.purges.push({ identityId: feedEntry.identity_id, at: write.at + 1 });
  };
  const state = new Map<string, Lifecycle>();
  try {
    const owner = await Caller.create("owner");
    // A write commits in D1 (with its outbox row) before its publication writes KV, and the API
    // answers after that; the sequencer states `pending` from the commit. The commit's time is not
    // observable here, so the write counts from when its request was sent: never later than the
    // commit, so the modelled authority never states the old version while the new one's KV
    // writes (and log entry) are already made, as it did when it counted from the answer.
    const answered = (
      sent: number,
      body: { identity_id: string; record_version: number; state: { lifecycle: Lifecycle } },
    ) => {
      trace.answers.push({
        at: sent,
        identityId: body.identity_id,
        version: body.record_version,
        lifecycle: body.state.lifecycle,
      });
      state.set(body.identity_id, body.state.lifecycle);
    };
    const create = async () => {
      const sent = Date.now();
      const body = await owner.createPassport({ display_name: `Passport ${trace.passports.length + 1}` });
      trace.passports.push(body.identity_id);
      answered(sent, body as never);
    };
    const createOne = async () => {
      trace.operations.push("create");
      await create();
    };
    const setState = async (id: string, lifecycle: Lifecycle) => {
      trace.operations.push(`${lifecycle === "revoked" ? "revoke" : lifecycle} ${id}`);
      answered(Date.now(), (await owner.json("PATCH", `/v1/passports/${id}/state`, { lifecycle })) as never);
    };
    // Every trace suspends a passport and reactivates it, and revokes one, at steps drawn from the
    // seed (a revocation drawn at random, 5% a step, is missing from about 40% of traces). Each
    // leaves as many passports active as before, so as many reads as before can be accepted.
    const suspendAt = Math.floor(random() * 4);
    const reactivateAt = suspendAt + 2 + Math.floor(random() * 4);
    const revokeAt = reactivateAt + 1 + Math.floor(random() * (operations - reactivateAt - 1));
    const lifecycleOf = (lifecycle: Lifecycle) => trace.passports.filter((id) => state.get(id) === lifecycle);
    let suspended: string | undefined;
    trace.operations.push("create", "create");
    await create();
    await create();
    // The first passport is never suspended or revoked (a reactivated one waits for its re-check,
    // so it is not accepted either): every trace keeps one passport whose reads can be accepted,
    // so invariants 2 and 3, which hold of accepted reads, are tried whatever the seed.
    const steady = trace.passports[0] as string;
    const others = (ids: string[]) => ids.filter((id) => id !== steady);
    for (let step = 0; step < operations; step++) {
      const live = trace.passports.filter((id) => state.get(id) !== "revoked");
      if (step === suspendAt || (step === reactivateAt && state.get(suspended as string) === "revoked")) {
        // (Again at the reactivation's step when a random step revoked the suspended passport.)
        if (others(lifecycleOf("active")).length === 0) await createOne();
        suspended = pick(others(lifecycleOf("active")));
        await setState(suspended, "suspended");
        if (step === suspendAt) continue;
      }
      if (step === reactivateAt && state.get(suspended as string) === "suspended") {
        await setState(suspended as string, "active");
        continue;
      }
      if (step === revokeAt) {
        // A passport is created first, so one stays live and as many stay active.
        await createOne();
        await setState(pick(others(trace.passports.filter((id) => state.get(id) !== "revoked"))), "revoked");
        continue;
      }
      const roll = random();
      if (roll < 0.1 && trace.passports.length < 4) {
        trace.operations.push("create");
        await create();
      } else if (roll < 0.4 && live.length > 0) {
        const id = pick(live);
        trace.operations.push(`change ${id}`);
        answered(
          Date.now(),
          (await owner.json("PATCH", `/v1/passports/${id}`, { display_name: `Renamed ${step}` })) as never,
        );
      } else if (roll < 0.55 && others(live).length > 0) {
        const id = pick(others(live));
        const lifecycle = state.get(id) === "active" ? "suspended" : "active";
        trace.operations.push(`${lifecycle} ${id}`);
        answered(Date.now(), (await owner.json("PATCH", `/v1/passports/${id}/state`, { lifecycle })) as never);
      } else if (roll < 0.6 && others(live).length > 0) {
        const id = pick(others(live));
        trace.operations.push(`revoke ${id}`);
        answered(
          Date.now(),
          (await owner.json("PATCH", `/v1/passports/${id}/state`, { lifecycle: "revoked" })) as never,
        );
      } else if (roll < 0.73) {
        const id = pick(trace.passports);
        trace.operations.push(`republish ${id}`);
        unwrap(await env.PUBLICATION_SEQUENCER.getByName(id).publish(id));
      } else if (roll < 0.85) {
        trace.operations.push("log pass");
        unwrap(await transparencyLog(env).publish());
      } else if (roll < 0.93 && live.length > 0) {
        // The change commits; its publication (and any log pass meanwhile) fails to write KV.
        const id = pick(live);
        trace.operations.push(`change during a KV outage ${id}`);
        outage = true;
        try {
          answered(
            Date.now(),
            (await owner.json("PATCH", `/v1/passports/${id}`, { display_name: `Outage ${step}` })) as never,
          );
        } finally {
          outage = false;
        }
      } else {
        trace.operations.push("outbox drain");
        await drainOutbox(env, new Date(Date.now() + 3_600_000));
      }
    }
    // Settle: whatever an outage left owed is published, and the log's checkpoint covers it all.
    trace.operations.push("outbox drain", "log pass");
    await drainOutbox(env, new Date(Date.now() + 3_600_000));
    unwrap(await transparencyLog(env).publish());
    unwrap(await transparencyLog(env).publish());
  } finally {
    prototype.put = originalPut;
  }
  return trace;
}
