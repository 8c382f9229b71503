import { z } from "zod";
import { TEST_SNS_PRIVATE_KEY_PEM } from "./sns-test-certificate.ts";

/** Where the simulator serves its signing certificate, under its own origin, as SNS does under sns.<region>.amazonaws.com. */
export const SIGNING_CERT_PATH = "/sns/SimpleNotificationService-simulator.pem";

/** The account that owns the marketplace's SNS topics (see docs/acquisition.md). */
const MARKETPLACE_TOPIC_OWNER = "287250355862";

export const NotificationRequest = z
  .object({
    /** The marketplace message, e.g. `{"action": "subscribe-success", "customer-identifier": …}`. */
    message: z.record(z.string(), z.unknown()),
    topic: z.enum(["subscription", "entitlement"]).default("subscription"),
    product_code: z.string().min(1).max(64).default("prod-passport-api"),
    signature_version: z.enum(["1", "2"]).default("2"),
    timestamp: z.string().optional(),
  })
  .strict();
export type NotificationRequest = z.infer<typeof NotificationRequest>;

const HASHES = { "1": "SHA-1", "2": "SHA-256" } as const;

function der(pem: string): Uint8Array {
  const body = pem.replace(/-----(BEGIN|END) [A-Z ]+-----/g, "").replace(/\s+/g, "");
  return Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
}

/**
 * A Notification envelope signed like SNS signs one: RSA PKCS #1 v1.5 over "Key\nValue\n" of
 * Message, MessageId, Subject (when present), Timestamp, TopicArn and Type, in that order, with
 * SHA-1 (SignatureVersion 1) or SHA-256 (2).
 */
export async function signedNotification(request: NotificationRequest, origin: string) {
  const envelope = {
    Type: "Notification",
    MessageId: crypto.randomUUID(),
    TopicArn: `arn:aws:sns:us-east-1:${MARKETPLACE_TOPIC_OWNER}:aws-mp-${request.topic}-notification-${request.product_code}`,
    Message: JSON.stringify(request.message),
    Timestamp: request.timestamp ?? new Date().toISOString(),
    SignatureVersion: request.signature_version,
    SigningCertURL: new URL(SIGNING_CERT_PATH, origin).toString(),
    UnsubscribeURL: new URL("/sns/unsubscribe", origin).toString(),
  };
  const text = ["Message", "MessageId", "Timestamp", "TopicArn", "Type"]
    .map((key) => `${key}\n${envelope[key as keyof typeof envelope]}\n`)
    .join("");
  const key = await crypto.subtle.importKey(
    "pkcs8",
    der(TEST_SNS_PRIVATE_KEY_PEM),
    { name: "RSASSA-PKCS1-v1_5", hash: HASHES[request.signature_version] },
    false,
    ["sign"],
  );
  const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, new TextEncoder().encode(text));
  return { ...envelope, Signature: btoa(String.fromCharCode(...new Uint8Array(signature))) };
}
