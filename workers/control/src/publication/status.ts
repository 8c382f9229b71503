import { type PassportStatus, STATUS_TOKEN_LIFETIME_SECONDS, STATUS_TOKEN_TYPE } from "@passport/domain";
import { and, desc, eq, isNotNull } from "drizzle-orm";
import { CompactSign } from "jose";
import { database } from "../db/client.ts";
import { outbox, passports, publications } from "../db/schema.ts";
import { signingKey } from "./signing.ts";

/** What the authoritative state says about one identity id, without the token's times. */
export type CurrentState =
  | { found: false }
  | ({ found: true } & Omit<PassportStatus, "iat" | "exp" | "identity_id"> & { identity_id: string });

/**
 * Reads a passport's current state from D1, the source of truth, in one round trip: its committed
 * lifecycle and version, the newest publication confirmed written to KV, and its outbox row, if
 * any (docs/freshness.md, Status token). A passport is `pending` exactly while it has an outbox row.
 */
export async function readCurrentState(db: D1Database, identityId: string): Promise<CurrentState> {
  const orm = database(db);
  const [[passport], [published], [owed]] = await orm.batch([
    orm
      .select({
        family: passports.family,
        lifecycle: passports.lifecycle,
        availability: passports.availability,
        recordVersion: passports.recordVersion,
      })
      .from(passports)
      .where(eq(passports.id, identityId)),
    orm
      .select({ recordVersion: publications.recordVersion, digest: publications.digest })
      .from(publications)
      .where(and(eq(publications.passportId, identityId), isNotNull(publications.writtenAt)))
      .orderBy(desc(publications.recordVersion))
      .limit(1),
    orm.select({ nextAttemptAt: outbox.nextAttemptAt }).from(outbox).where(eq(outbox.passportId, identityId)),
  ]);
  if (!passport) return { found: false };
  return {
    found: true,
    identity_id: identityId,
    family: passport.family,
    lifecycle: passport.lifecycle,
    ...(passport.availability ? { availability: passport.availability } : {}),
    publication: owed ? "pending" : "published",
    ...(published ? { record_version: published.recordVersion, digest: published.digest } : {}),
    ...(owed ? { pending_version: passport.recordVersion, next_attempt_at: owed.nextAttemptAt } : {}),
  };
}

/**
 * Signs a status token: a compact JWS (ES256, the record key, `typ` passport-status+jwt) over the
 * state and its times, valid for STATUS_TOKEN_LIFETIME_SECONDS from `now`.
 */
export async function signStatus(
  secret: string | undefined,
  state: Extract<CurrentState, { found: true }>,
  now: number,
): Promise<string> {
  if (!secret) throw new Error("SIGNING_KEY is not configured; status tokens cannot be issued unsigned");
  const { kid, key } = await signingKey(secret);
  const { found: _, ...claims } = state;
  const iat = Math.floor(now / 1000);
  const payload: PassportStatus = { ...claims, iat, exp: iat + STATUS_TOKEN_LIFETIME_SECONDS };
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: "ES256", kid, typ: STATUS_TOKEN_TYPE })
    .sign(key);
}
