export * from "./credentials.ts";
export * from "./identity-id.ts";
export * from "./lifecycle.ts";
export * from "./problems.ts";
export * from "./projection.ts";
export * from "./record.ts";
export * from "./seal.ts";
export * from "./storage-keys.ts";
