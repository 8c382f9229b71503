// The node:crypto calls the control plane makes (nodejs_compat provides the module in workerd): a
// synchronous SHA-256, so a log append never awaits (publication/log/tree.ts) and the verified-token
// cache keys a request without a promise (access/verified-tokens.ts). The Worker's program has no
// Node types, and pulling them all in would type Node globals the Worker lacks.
declare module "node:crypto" {
  interface Hash {
    update(data: Uint8Array | string): Hash;
    digest(): Uint8Array;
    digest(encoding: "base64"): string;
  }
  export function createHash(algorithm: "sha256"): Hash;
}
