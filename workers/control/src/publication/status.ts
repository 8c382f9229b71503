import { type PassportStatus, STATUS_TOKEN_LIFETIME_SECONDS, STATUS_TOKEN_TYPE } from "@passport/domain";
import { CompactSign } from "jose";
import { signingKey } from "./signing.ts";

/** What the authoritative state says about one identity id, without the token's times. */
export type CurrentState =
  | { found: false }
  | ({ found: true } & Omit<PassportStatus, "iat" | "exp" | "identity_id"> & { identity_id: string });

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
