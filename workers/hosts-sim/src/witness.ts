// A C2SP tlog-witness for tests and local development: `POST /add-checkpoint` on a host registered
// with `PUT /witness/{host}` (the admin host). It checks the log's signature, that `old` is the
// size it last cosigned (409 with its size otherwise) and the consistency proof from there, then
// answers its own Ed25519 note signature line over the checkpoint. State lives in memory.
import {
  formatVerifierKey,
  parseCheckpoint,
  parseVerifierKey,
  signatureLine,
  verifyConsistency,
  verifyNote,
} from "@passport/protocol";

/** What `PUT /witness/{host}` takes: the witness's name and private Ed25519 JWK, and the log it witnesses. */
export interface WitnessFixture {
  name: string;
  private_jwk: string;
  log_key: string;
}

type Witness = {
  name: string;
  privateKey: CryptoKey;
  verifierKey: string;
  logKey: string;
  size: number;
  root?: Uint8Array;
};

const witnesses = new Map<string, Witness>();

export async function registerWitness(host: string, fixture: WitnessFixture): Promise<void> {
  const jwk = JSON.parse(fixture.private_jwk) as JsonWebKey;
  const privateKey = await crypto.subtle.importKey("jwk", jwk, { name: "Ed25519" }, false, ["sign"]);
  const publicKey = Uint8Array.from(atob((jwk.x ?? "").replaceAll("-", "+").replaceAll("_", "/")), (c) =>
    c.charCodeAt(0),
  );
  witnesses.set(host, {
    name: fixture.name,
    privateKey,
    verifierKey: await formatVerifierKey(fixture.name, publicKey),
    logKey: fixture.log_key,
    size: 0,
  });
}

const text = (body: string, status: number, type = "text/plain; charset=utf-8") =>
  new Response(body, { status, headers: { "content-type": type } });

function fromBase64(line: string): Uint8Array {
  return Uint8Array.from(atob(line), (c) => c.charCodeAt(0));
}

export async function witnessAnswer(host: string, request: Request, url: URL): Promise<Response | undefined> {
  const witness = witnesses.get(host);
  if (!witness) return undefined;
  if (request.method !== "POST" || url.pathname !== "/add-checkpoint") return text("not found\n", 404);
  const body = await request.text();
  const split = body.indexOf("\n\n");
  const [oldLine = "", ...proofLines] = body.slice(0, split).split("\n");
  const old = /^old (0|[1-9][0-9]*)$/.exec(oldLine);
  if (split < 0 || !old) return text("malformed request\n", 400);
  const note = body.slice(split + 2);
  if (Number(old[1]) !== witness.size) return text(`${witness.size}\n`, 409, "text/x.tlog.size");
  const check = await verifyNote(note, [await parseVerifierKey(witness.logKey)]);
  if (!check.ok) return text("checkpoint not signed by the log\n", 403);
  const checkpoint = parseCheckpoint(check.text);
  if (!checkpoint || checkpoint.size < witness.size) return text("bad checkpoint\n", 400);
  if (witness.root) {
    const proof = proofLines.map(fromBase64);
    const consistent = await verifyConsistency(witness.size, checkpoint.size, witness.root, checkpoint.rootHash, proof);
    if (!consistent) return text("not consistent with the checkpoint cosigned before\n", 422);
  }
  witness.size = checkpoint.size;
  witness.root = checkpoint.rootHash;
  return text(await signatureLine(check.text, witness.verifierKey, witness.privateKey), 200);
}
