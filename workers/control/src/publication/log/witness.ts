import { parseVerifierKey, verifyNote } from "@passport/protocol";
import { type OutboundPolicy, postText, type Transport } from "../../outbound/fetch.ts";

/** One witness of LOG_WITNESSES: its key name, its note verifier key and its tlog-witness base URL. */
export interface Witness {
  name: string;
  key: string;
  url: string;
}

/** The configured witnesses; a malformed LOG_WITNESSES is reported and means none. */
export function configuredWitnesses(text: string | undefined): Witness[] {
  try {
    const parsed = JSON.parse(text || "[]") as unknown;
    if (
      Array.isArray(parsed) &&
      parsed.every(
        (w) =>
          typeof w?.name === "string" &&
          typeof w?.key === "string" &&
          typeof w?.url === "string" &&
          w.key.startsWith(`${w.name}+`),
      )
    ) {
      return parsed as Witness[];
    }
  } catch {}
  console.error(JSON.stringify({ level: "error", event: "log_witnesses_invalid" }));
  return [];
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export type WitnessAnswer =
  | { kind: "cosigned"; lines: string[] }
  | { kind: "conflict"; size: number }
  | { kind: "failed"; reason: string };

/**
 * One C2SP tlog-witness `add-checkpoint` request: `old <size>`, the consistency proof from that size
 * (base64 hashes, one a line), a blank line, then the signed checkpoint. A 200 carries the witness's
 * signature lines, kept only if they verify with its configured key over the checkpoint text; a 409
 * names the size the witness last cosigned, so the caller retries from there.
 */
export async function addCheckpoint(
  outbound: { transport: Transport; policy: OutboundPolicy },
  witness: Witness,
  oldSize: number,
  proof: readonly Uint8Array[],
  note: string,
): Promise<WitnessAnswer> {
  let target: URL;
  try {
    target = new URL("add-checkpoint", witness.url.endsWith("/") ? witness.url : `${witness.url}/`);
  } catch {
    return { kind: "failed", reason: "the witness URL is not a URL" };
  }
  const body = [`old ${oldSize}`, ...proof.map(toBase64), "", note].join("\n");
  const answer = await postText(outbound.transport, outbound.policy, target, body, "passport-transparency-log");
  if (!answer.ok) return { kind: "failed", reason: answer.reason };
  if (answer.status === 409 && /^(0|[1-9][0-9]*)\n?$/.test(answer.body)) {
    return { kind: "conflict", size: Number(answer.body.trim()) };
  }
  if (answer.status !== 200) return { kind: "failed", reason: `the witness answered HTTP ${answer.status}` };
  const lines = answer.body.split("\n").filter((line) => line.startsWith("\u2014 "));
  const text = note.slice(0, note.indexOf("\n\n") + 1);
  const check = await verifyNote(`${text}\n${lines.map((line) => `${line}\n`).join("")}`, [
    await parseVerifierKey(witness.key),
  ]);
  if (!check.ok) return { kind: "failed", reason: `the witness's cosignature does not verify (${check.reason})` };
  return { kind: "cosigned", lines: lines.filter((line) => line.startsWith(`\u2014 ${witness.name} `)) };
}
