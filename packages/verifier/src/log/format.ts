// The transparency log's format, for the log's writer and witnesses (`@passport/verifier/log`):
// entries and bundles, RFC 6962 Merkle hashing and proofs, signed notes and checkpoints, tile paths.
export { decodeBundle, decodeEntry, encodeBundle, encodeEntry, type LogEntry } from "./entry.ts";
export { type Hash, leafHash, rootFromLeafHashes, verifyConsistency, verifyInclusion } from "./merkle.ts";
export {
  type Checkpoint,
  formatCheckpoint,
  formatVerifierKey,
  type NoteCheck,
  type NoteVerifierKey,
  parseCheckpoint,
  parseVerifierKey,
  signatureLine,
  verifyNote,
} from "./note.ts";
export { entryTilePath, hashTilePath } from "./tiles.ts";
