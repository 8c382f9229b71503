import type { Role } from "../db/organisations.ts";

export type { Role };

/** Roles from least to most powerful; each may do everything the ones before it may. See docs/roles.md. */
const RANK: Record<Role, number> = { viewer: 0, editor: 1, admin: 2, owner: 3 };

export function isRole(value: string): value is Role {
  return Object.hasOwn(RANK, value);
}

/**
 * Whether `role` (a member's role as stored or as the API answered it) may do what `minimum` may.
 * @example
 * roleAtLeast(membership.role, "admin"); // true for admins and owners
 */
export function roleAtLeast(role: string | undefined, minimum: Role): boolean {
  return role !== undefined && isRole(role) && RANK[role] >= RANK[minimum];
}

/**
 * The role a change asks of its caller: the route's `declared` role, or `needs` when the change
 * needs more (admin for a lifecycle change through a route editors may use).
 */
export function requiredRole(declared: Role, needs?: Role): Role {
  return needs && !roleAtLeast(declared, needs) ? needs : declared;
}
