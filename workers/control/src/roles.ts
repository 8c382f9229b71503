import type { Role } from "./db/organisations.ts";

/** Roles from least to most powerful; each may do everything the ones before it may. See docs/roles.md. */
const RANK: Record<Role, number> = { viewer: 0, editor: 1, admin: 2, owner: 3 };

export function roleAtLeast(role: Role, minimum: Role): boolean {
  return RANK[role] >= RANK[minimum];
}

export function isRole(value: string): value is Role {
  return value in RANK;
}
