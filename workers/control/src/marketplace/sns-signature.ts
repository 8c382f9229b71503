import { importX509 } from "jose";
import { z } from "zod";

/** An SNS envelope as SNS delivers it (HTTPS, or an SQS message without raw delivery). */
export const SnsEnvelope = z.object({
  Type: z.string().max(64),
  MessageId: z.string().min(1).max(128),
  TopicArn: z.string().max(256).optional(),
  Subject: z.string().max(256).nullish(),
  Message: z.string().max(256 * 1024),
  Timestamp: z.string().max(64).optional(),
  SignatureVersion: z.string().max(8).optional(),
  Signature: z.string().max(2048).optional(),
  SigningCertURL: z.string().max(1024).optional(),
});
export type SnsEnvelope = z.infer<typeof SnsEnvelope>;

/** Why an envelope was not accepted; `retryable` when the fault was fetching the certificate, not the envelope. */
export class SnsUnverified extends Error {
  constructor(
    message: string,
    readonly retryable = false,
  ) {
    super(message);
  }
}

/** The PEM certificate behind a SigningCertURL; the outbound adapter decides which URLs it fetches. */
export type SigningCertificates = (url: URL) => Promise<string>;

/** SignatureVersion 1 is SHA1withRSA, 2 is SHA256withRSA; the topic owner chooses, and AWS's own topics default to 1. */
const SIGNATURE_HASH: Record<string, "SHA-1" | "SHA-256"> = { "1": "SHA-1", "2": "SHA-256" };

/**
 * The marketplace's topics, owned by AWS Marketplace's account in us-east-1 (published examples;
 * see docs/acquisition.md). SNS signs every topic's messages with the same certificate, so a
 * genuine signature alone would also pass a message from anyone's own topic.
 */
const MARKETPLACE_TOPIC =
  /^arn:aws:sns:us-east-1:287250355862:aws-mp-(subscription|entitlement)-notification(-[\w-]+)?$/;

function stringToSign(envelope: SnsEnvelope & { TopicArn: string; Timestamp: string }): string {
  const fields: [string, string | null | undefined][] = [
    ["Message", envelope.Message],
    ["MessageId", envelope.MessageId],
    ["Subject", envelope.Subject],
    ["Timestamp", envelope.Timestamp],
    ["TopicArn", envelope.TopicArn],
    ["Type", envelope.Type],
  ];
  return fields
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([key, value]) => `${key}\n${value}\n`)
    .join("");
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

async function publicKey(pem: string, hash: "SHA-1" | "SHA-256"): Promise<CryptoKey> {
  try {
    // jose reads the key out of the certificate; WebCrypto then binds it to the envelope's hash (jose has no SHA-1 RSA).
    const key = await importX509(pem, "RS256", { extractable: true });
    const spki = await crypto.subtle.exportKey("spki", key);
    return await crypto.subtle.importKey("spki", spki, { name: "RSASSA-PKCS1-v1_5", hash }, false, ["verify"]);
  } catch {
    throw new SnsUnverified("The SNS signing certificate is not an RSA certificate.");
  }
}

/**
 * Verifies a Notification envelope as SNS signs it: RSA PKCS #1 v1.5 over "Key\nValue\n" of
 * Message, MessageId, Subject (when present), Timestamp, TopicArn and Type, with the certificate
 * at SigningCertURL. Throws SnsUnverified unless the signature holds and the topic is the marketplace's.
 * @example
 * await verifySnsNotification(envelope, snsSigningCertificates(env));
 */
export async function verifySnsNotification(envelope: SnsEnvelope, certificates: SigningCertificates): Promise<void> {
  const { Signature, SigningCertURL, SignatureVersion, TopicArn, Timestamp } = envelope;
  if (!Signature || !SigningCertURL || !SignatureVersion) throw new SnsUnverified("The SNS envelope is not signed.");
  const hash = SIGNATURE_HASH[SignatureVersion];
  if (!hash) throw new SnsUnverified(`SNS SignatureVersion ${SignatureVersion} is not supported.`);
  if (!TopicArn || !Timestamp) throw new SnsUnverified("The SNS envelope has no TopicArn or Timestamp.");
  if (!MARKETPLACE_TOPIC.test(TopicArn)) throw new SnsUnverified("The SNS topic is not a marketplace topic.");
  let url: URL;
  let signature: Uint8Array<ArrayBuffer>;
  try {
    url = new URL(SigningCertURL);
    signature = base64Bytes(Signature);
  } catch {
    throw new SnsUnverified("The SNS envelope's SigningCertURL or Signature is malformed.");
  }
  const key = await publicKey(await certificates(url), hash);
  const data = new TextEncoder().encode(stringToSign({ ...envelope, TopicArn, Timestamp }));
  if (!(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", key, signature, data))) {
    throw new SnsUnverified("The SNS signature does not match the envelope.");
  }
}
