import { PRIMARY_BINDING_CLASS } from "@passport/domain";
import { recordProof, withdrawProof } from "../db/binding-index.ts";
import type { PassportRow } from "../db/passports.ts";
import { shardsOf } from "../db/shards.ts";

// The directory's index of proven primary binding values (db/binding-index.ts, docs/sharding.md)
// follows each proof a check gains or loses, so a claim by an organisation in another shard is
// refused while the proof is fresh. Written after the shard committed the check: the shard holds
// the proof, the index follows it. A failed index write is logged and leaves the check as it is;
// the next check of the binding writes its proof again.

/** Records (`freshUntil` set) or withdraws (null) a passport's proof of a binding value in the index. */
export async function followProof(
  env: Env,
  passport: Pick<PassportRow, "id" | "organisationId" | "family">,
  binding: { class: string; value: string },
  freshUntil: string | null,
): Promise<void> {
  const directory = shardsOf(env).directory;
  if (!directory || binding.class !== PRIMARY_BINDING_CLASS[passport.family]) return;
  const indexed = { class: binding.class, value: binding.value, identityId: passport.id };
  try {
    if (freshUntil === null) await withdrawProof(directory, indexed);
    else await recordProof(directory, { ...indexed, organisationId: passport.organisationId }, freshUntil);
  } catch (error) {
    console.error(
      JSON.stringify({
        level: "error",
        event: "proof_index_not_written",
        identity_id: passport.id,
        message: String(error),
      }),
    );
  }
}
