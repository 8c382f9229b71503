// The one node:crypto call the log writer makes (nodejs_compat provides the module in workerd): a
// synchronous SHA-256, so an append never awaits (workers/control/src/publication/log/tree.ts). The Worker's
// program has no Node types, and pulling them all in would type Node globals the Worker lacks.
declare module "node:crypto" {
  interface Hash {
    update(data: Uint8Array): Hash;
    digest(): Uint8Array;
  }
  export function createHash(algorithm: "sha256"): Hash;
}
