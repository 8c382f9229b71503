// `@passport/verifier/log`: the transparency log's format, for a log's witnesses and for consumers
// that read a log key or a checkpoint themselves. The format is @passport/protocol's (bundled into
// the published package, docs/verifier-package.md); this entry point names the part consumers use.
export {
  type Checkpoint,
  decodeBundle,
  decodeEntry,
  encodeBundle,
  encodeEntry,
  entryTilePath,
  formatCheckpoint,
  formatVerifierKey,
  type Hash,
  hashTilePath,
  type LogEntry,
  leafHash,
  type NoteCheck,
  type NoteVerifierKey,
  parseCheckpoint,
  parseVerifierKey,
  rootFromLeafHashes,
  signatureLine,
  verifyConsistency,
  verifyInclusion,
  verifyNote,
} from "@passport/protocol";
