// The transparency log's format (docs/transparency-log.md), for its writer, its witnesses and its
// readers: entries and bundles, RFC 9162 Merkle hashing and proofs, signed notes, checkpoints and
// cosignatures, tile paths and proofs from tiles. Fetching and caching are the reader's own (the
// verifier's LogClient); nothing here does I/O.
export { advanceCheckpoint, type CheckpointAdvance, type RememberedCheckpoint } from "./checkpoint-state.ts";
export {
  parseWitnessKey,
  verifyCosignatures,
  type WitnessKey,
} from "./cosignature.ts";
export {
  decodeBundle,
  decodeEntry,
  encodeBundle,
  encodeEntry,
  entryPrefix,
  type LogEntry,
  startsWith,
} from "./entry.ts";
export {
  emptyRoot,
  type Hash,
  leafHash,
  leafHashSync,
  rootFromLeafHashes,
  rootFromLeafHashesSync,
  sameHash,
  verifyConsistency,
  verifyInclusion,
} from "./merkle.ts";
export {
  type Checkpoint,
  formatCheckpoint,
  formatVerifierKey,
  meetsWitnessQuorum,
  type NoteCheck,
  type NoteVerifierKey,
  parseCheckpoint,
  parseVerifierKey,
  signatureLine,
  verifyNote,
} from "./note.ts";
export {
  chunkInclusionPath,
  consistencyPath,
  subtreeHash,
  type TileReader,
  TileShapeError,
  tileWidth,
  verifyChunk,
} from "./tile-proofs.ts";
export { entryTilePath, hashTilePath, hashTiles, leafHashesFromTiles, tileIndexPath } from "./tiles.ts";
