import { readCapped } from "../outbound/read-capped.ts";
import type { MarketplaceEnv } from "./config.ts";
import { type SigningCertificates, SnsUnverified } from "./sns-signature.ts";

/** SNS's certificate hosts: sns.<region>.amazonaws.com, and the China partition's .com.cn. */
const SNS_HOST = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;
/** A real SNS certificate is under 2 KB; anything much larger is not one. */
const MAX_CERTIFICATE_BYTES = 16 * 1024;
const FETCH_TIMEOUT_MS = 5_000;
/** A SigningCertURL names one certificate (its file name carries its hash), so a day's reuse is safe. */
const CACHE_MS = 24 * 3600 * 1000;
const CACHE_ENTRIES = 32;

// Per isolate: every notification of a day is signed by the same one or two certificates.
const cache = new Map<string, { pem: string; until: number }>();

/**
 * The only origin besides SNS's hosts a certificate may come from: MARKETPLACE_SNS_CERT_ORIGIN,
 * honoured only when ENVIRONMENT is "development" (the simulator), so a production config that
 * sets it by mistake loosens nothing.
 */
export function developmentCertOrigin(env: Pick<MarketplaceEnv, "ENVIRONMENT" | "MARKETPLACE_SNS_CERT_ORIGIN">) {
  return env.ENVIRONMENT === "development" && env.MARKETPLACE_SNS_CERT_ORIGIN
    ? env.MARKETPLACE_SNS_CERT_ORIGIN
    : undefined;
}

/**
 * Whether a SigningCertURL may be fetched: https on an SNS host, default port, a `.pem` path, no
 * credentials, query or fragment (or, in development only, the configured simulator origin).
 * @example
 * isSigningCertUrl(new URL("https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem")); // true
 */
export function isSigningCertUrl(url: URL, developmentOrigin?: string): boolean {
  if (url.username || url.password || url.search || url.hash || !url.pathname.endsWith(".pem")) return false;
  if (developmentOrigin !== undefined && url.origin === developmentOrigin) return true;
  return url.protocol === "https:" && url.port === "" && SNS_HOST.test(url.hostname);
}

async function readCertificate(response: Response): Promise<string> {
  const bytes = await readCapped(response, MAX_CERTIFICATE_BYTES);
  if (bytes === "too-large" || bytes.byteLength === 0) {
    throw new SnsUnverified("The SNS signing certificate is too large or empty.");
  }
  return new TextDecoder().decode(bytes);
}

/**
 * The outbound adapter that fetches SNS signing certificates: allowed URLs only, no redirects,
 * a timeout and a size cap; certificates are cached by URL. A certificate that cannot be fetched
 * for a transient reason (network, timeout, 5xx) is a retryable failure.
 * @example
 * await verifySnsNotification(envelope, snsSigningCertificates(env));
 */
export function snsSigningCertificates(env: MarketplaceEnv): SigningCertificates {
  const developmentOrigin = developmentCertOrigin(env);
  return async (url) => {
    if (!isSigningCertUrl(url, developmentOrigin)) {
      throw new SnsUnverified("The SNS SigningCertURL is not on an SNS certificate host.");
    }
    const key = url.toString();
    const cached = cache.get(key);
    if (cached && cached.until > Date.now()) return cached.pem;

    const request = new Request(key, { redirect: "manual", signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    // The simulator is reached through its service binding in tests, as the marketplace adapter does.
    const simulator =
      developmentOrigin !== undefined && url.origin === developmentOrigin ? env.MARKETPLACE_SIM : undefined;
    let response: Response;
    try {
      response = await (simulator ? simulator.fetch(request) : fetch(request));
    } catch {
      throw new SnsUnverified("The SNS signing certificate could not be fetched.", true);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new SnsUnverified(
        `The SNS signing certificate answered HTTP ${response.status}.`,
        response.status >= 500 || response.status === 429,
      );
    }
    let pem: string;
    try {
      pem = await readCertificate(response);
    } catch (error) {
      if (error instanceof SnsUnverified) throw error;
      throw new SnsUnverified("The SNS signing certificate could not be read.", true);
    }
    if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw new SnsUnverified("SigningCertURL is not a certificate.");
    if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, { pem, until: Date.now() + CACHE_MS });
    return pem;
  };
}
