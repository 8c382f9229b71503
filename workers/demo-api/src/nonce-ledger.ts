// The demo API's replay refusal (docs/reciprocal-trust.md, Window and replay): one Durable Object
// remembers each signature nonce until the signature can no longer be accepted, so a signed call
// replayed to any isolate of this Worker within its window is refused. One object serves every
// call here (a demo's load); a busy API would name one per shard of the nonce.
import { DurableObject } from "cloudflare:workers";
import type { NonceStore } from "@passport/verifier/provider";

export class NonceLedger extends DurableObject<Env> {
  /** True the first time `nonce` is offered before `until` (ms since the epoch), false after. */
  async firstSeen(nonce: string, until: number): Promise<boolean> {
    const now = Date.now();
    const known = await this.ctx.storage.get<number>(nonce);
    if (known !== undefined && known > now) return false;
    await this.ctx.storage.put(nonce, until);
    // The alarm forgets nonces whose signatures have expired; one alarm at a time, at the earliest.
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null || alarm > until) await this.ctx.storage.setAlarm(until);
    return true;
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    let next: number | undefined;
    for (const [nonce, until] of await this.ctx.storage.list<number>()) {
      if (until <= now) await this.ctx.storage.delete(nonce);
      else next = Math.min(next ?? until, until);
    }
    if (next !== undefined) await this.ctx.storage.setAlarm(next);
  }
}

/** The ledger as the provider middleware's nonce store. */
export function nonceStore(env: Env): NonceStore {
  return { firstSeen: (nonce, until) => env.NONCES.get(env.NONCES.idFromName("nonces")).firstSeen(nonce, until) };
}
