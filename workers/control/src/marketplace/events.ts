import { z } from "zod";
import { SnsEnvelope } from "./sns-signature.ts";

/**
 * A marketplace subscription change, whichever way it arrived: an EventBridge agreement or
 * license event, or a legacy SNS subscription/entitlement message. Field paths inside EventBridge
 * `detail` are not all confirmed (platform facts), so each identifier is looked for in the places
 * the published examples use.
 */
export interface SubscriptionChange {
  eventId: string;
  format: "eventbridge" | "sns";
  kind: string;
  /** The event's own time, or `receivedAt` when it had none or claimed one too far ahead (EVENT_TIME_ALLOWANCE_MS). */
  occurredAt: string;
  receivedAt: string;
  /** The time the event claimed, when it was not believed. */
  claimedTime?: string;
  /** The entitlement status this change sets, or undefined when it only informs. */
  status?: string;
  awsAccountId?: string;
  licenseArn?: string;
  customerIdentifier?: string;
  productCode?: string;
  agreementId?: string;
}

const EVENTBRIDGE_STATUS: Record<string, string | undefined> = {
  "Purchase Agreement Created": "active",
  "Purchase Agreement Amended": "active",
  "Purchase Agreement Ended": "ended",
  "Purchase Agreement Ending": undefined,
  "License Updated": "active",
  "License Deprovisioned": "deprovisioned",
};

const SNS_STATUS: Record<string, string | undefined> = {
  "subscribe-success": "active",
  "subscribe-fail": "failed",
  "unsubscribe-pending": "unsubscribe_pending",
  "unsubscribe-success": "ended",
  // AWS says to call GetEntitlements after this one; it changes no subscription status by itself.
  "entitlement-updated": undefined,
};

const EventBridgeEvent = z.object({
  id: z.string().min(1).max(128),
  "detail-type": z.string().min(1).max(256),
  source: z.string().max(256).optional(),
  account: z.string().optional(),
  time: z.string().max(64).optional(),
  resources: z.array(z.string()).optional(),
  detail: z.record(z.string(), z.unknown()).default({}),
});

/**
 * How far an event's own time may run ahead of our receive time and still be believed: clock skew
 * between the marketplace and us is seconds, so five minutes leaves room for it. A later time
 * would outrank every event and check until that moment (a "2099" event would lock an agreement
 * for good), so it is recorded as the receive time instead.
 */
export const EVENT_TIME_ALLOWANCE_MS = 5 * 60 * 1000;

/** Checks an SNS envelope's signature (sns-signature.ts), throwing when it does not hold. */
export type SnsVerifier = (envelope: SnsEnvelope) => Promise<void>;

export class EventRejected extends Error {}

function pick(value: unknown, ...path: string[]): string | undefined {
  let current: unknown = value;
  for (const key of path) {
    if (!current || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return typeof current === "string" && current.length > 0 ? current : undefined;
}

function first(...values: (string | undefined)[]): string | undefined {
  return values.find((v) => v !== undefined);
}

function eventTime(
  value: string | undefined,
  receivedAt: string,
): Pick<SubscriptionChange, "occurredAt" | "claimedTime"> {
  const claimed = value ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(claimed)) return { occurredAt: receivedAt, ...(value ? { claimedTime: value } : {}) };
  if (claimed > Date.parse(receivedAt) + EVENT_TIME_ALLOWANCE_MS) return { occurredAt: receivedAt, claimedTime: value };
  return { occurredAt: new Date(claimed).toISOString() };
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function fromEventBridge(event: z.infer<typeof EventBridgeEvent>, receivedAt: string): SubscriptionChange {
  // "Purchase Agreement Created - Manufacturer" and "… - Proposer" are the same change.
  const kind = event["detail-type"].replace(/ - (Manufacturer|Proposer|Acceptor)$/, "");
  if (!Object.hasOwn(EVENTBRIDGE_STATUS, kind))
    throw new EventRejected(`Unsupported event type "${event["detail-type"]}".`);
  const d = event.detail;
  const licenseFromResources = event.resources?.find((r) => r.startsWith("arn:aws:license-manager"));
  const licenseArns = Array.isArray(d.licenseArns) ? d.licenseArns.filter((v) => typeof v === "string") : [];
  return {
    eventId: `eventbridge:${event.id}`,
    format: "eventbridge",
    kind,
    ...eventTime(event.time, receivedAt),
    receivedAt,
    status: EVENTBRIDGE_STATUS[kind],
    awsAccountId: first(
      pick(d, "acceptor", "accountId"),
      pick(d, "customerAWSAccountId"),
      pick(d, "customerAwsAccountId"),
      pick(d, "buyer", "accountId"),
      pick(d, "license", "beneficiary"),
    ),
    licenseArn: first(
      pick(d, "licenseArn"),
      pick(d, "license", "licenseArn"),
      pick(d, "license", "arn"),
      licenseArns[0] as string | undefined,
      licenseFromResources,
    ),
    productCode: first(
      pick(d, "productCode"),
      pick(d, "product", "code"),
      pick(d, "product", "productCode"),
      pick(d, "product", "id"),
    ),
    agreementId: first(pick(d, "agreement", "id"), pick(d, "agreementId")),
  };
}

async function fromSnsMessage(message: unknown, messageId: string | undefined, receivedAt: string, timestamp?: string) {
  const action = pick(message, "action");
  if (!action || !Object.hasOwn(SNS_STATUS, action))
    throw new EventRejected(`Unsupported SNS action "${action ?? ""}".`);
  const change: SubscriptionChange = {
    eventId: `sns:${messageId ?? (await sha256Hex(JSON.stringify(message)))}`,
    format: "sns",
    kind: action,
    ...eventTime(timestamp, receivedAt),
    receivedAt,
    status: SNS_STATUS[action],
    // One version of AWS's page spells the keys in kebab case, another in Pascal case: read both.
    customerIdentifier: first(pick(message, "customer-identifier"), pick(message, "CustomerIdentifier")),
    productCode: first(pick(message, "product-code"), pick(message, "ProductCode")),
    awsAccountId: first(pick(message, "customer-aws-account-id"), pick(message, "CustomerAWSAccountId")),
    licenseArn: first(pick(message, "license-arn"), pick(message, "LicenseArn")),
  };
  return change;
}

/**
 * Normalises one delivery to the event route: an EventBridge event (as an API destination or a
 * relay posts it), an SNS notification envelope (Message holds the marketplace JSON; its signature
 * must hold, or `verifySns` throws), or the bare SNS message.
 * @example
 * await parseSubscriptionChange({ action: "unsubscribe-success", "customer-identifier": "c", "product-code": "p" }, now, verify);
 */
export async function parseSubscriptionChange(
  body: unknown,
  receivedAt: string,
  verifySns: SnsVerifier,
): Promise<SubscriptionChange> {
  if (body && typeof body === "object" && "detail-type" in body) {
    const event = EventBridgeEvent.safeParse(body);
    if (!event.success) throw new EventRejected("The EventBridge event is missing its id, detail-type or detail.");
    return fromEventBridge(event.data, receivedAt);
  }
  if (body && typeof body === "object" && "Type" in body) {
    const envelope = SnsEnvelope.safeParse(body);
    if (!envelope.success) {
      throw new EventRejected("The SNS envelope is missing MessageId or Message, or a field is too long.");
    }
    if (envelope.data.Type !== "Notification") {
      throw new EventRejected(
        `SNS ${envelope.data.Type} is not handled here: subscribe a queue and relay notifications (docs/acquisition.md).`,
      );
    }
    await verifySns(envelope.data);
    let message: unknown;
    try {
      message = JSON.parse(envelope.data.Message);
    } catch {
      throw new EventRejected("The SNS Message is not JSON.");
    }
    return fromSnsMessage(message, envelope.data.MessageId, receivedAt, envelope.data.Timestamp);
  }
  if (body && typeof body === "object" && "action" in body) return fromSnsMessage(body, undefined, receivedAt);
  throw new EventRejected("Send an EventBridge event, an SNS notification envelope or an SNS marketplace message.");
}

/** The agreement key a change applies to, with the same spelling the acquisition flow uses. */
export function changeKey(change: SubscriptionChange): string | undefined {
  if (change.awsAccountId && change.licenseArn) return `license:${change.awsAccountId}:${change.licenseArn}`;
  if (change.customerIdentifier && change.productCode) {
    return `legacy:${change.customerIdentifier}:${change.productCode}`;
  }
  if (change.awsAccountId && change.agreementId) return `agreement:${change.awsAccountId}:${change.agreementId}`;
  return undefined;
}
