import { base64url } from "jose";

/** SHA-256 of a UTF-8 string, base64url-encoded without padding. */
export async function sha256Base64url(text: string): Promise<string> {
  return base64url.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}
