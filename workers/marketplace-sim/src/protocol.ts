/**
 * The AWS JSON 1.1 protocol as the marketplace services speak it: the operation is named in
 * `X-Amz-Target`, bodies are `application/x-amz-json-1.1`, and errors carry their type both in the
 * body's `__type` (with a namespace prefix) and in `x-amzn-ErrorType` (with a URI suffix).
 */
export const JSON_11 = "application/x-amz-json-1.1";

export const SERVICES = {
  metering: { target: "AWSMPMeteringService", namespace: "com.amazonaws.awsmpmetering" },
  entitlement: { target: "AWSMPEntitlementService", namespace: "com.amazonaws.awsmpentitlement" },
} as const;
export type Service = keyof typeof SERVICES;

export class AwsError extends Error {
  constructor(
    readonly type: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function errorResponse(service: Service, error: AwsError): Response {
  const { namespace } = SERVICES[service];
  return new Response(JSON.stringify({ __type: `${namespace}#${error.type}`, message: error.message }), {
    status: error.status,
    headers: {
      "content-type": JSON_11,
      "x-amzn-errortype": `${error.type}:http://internal.amazon.com/coral/${namespace}/`,
      "x-amzn-requestid": crypto.randomUUID(),
    },
  });
}

export function jsonResponse(body: unknown): Response {
  return new Response(JSON.stringify(body), {
    headers: { "content-type": JSON_11, "x-amzn-requestid": crypto.randomUUID() },
  });
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=[A-Z0-9]+\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=[0-9a-f]{64}$/;

/**
 * Checks that a request carries a well-formed SigV4 signature for the `aws-marketplace` signing
 * name, covering the headers that matter. The signature itself is not verified: the simulator
 * holds no seller credentials.
 */
export function signatureProblem(headers: Headers): AwsError | undefined {
  const authorization = headers.get("authorization");
  if (!authorization) return new AwsError("MissingAuthenticationTokenException", 403, "Missing Authentication Token");
  const match = AUTHORIZATION.exec(authorization);
  const amzDate = headers.get("x-amz-date");
  if (!match || !amzDate?.startsWith(match[1] ?? "-")) {
    return new AwsError(
      "IncompleteSignatureException",
      403,
      "The request signature is not a complete SigV4 signature.",
    );
  }
  if (match[3] !== "aws-marketplace") {
    return new AwsError(
      "InvalidSignatureException",
      403,
      `Credential should be scoped to correct service: 'aws-marketplace', not '${match[3]}'.`,
    );
  }
  const signed = (match[4] ?? "").split(";");
  for (const required of ["host", "x-amz-date", "x-amz-target"]) {
    if (!signed.includes(required)) {
      return new AwsError("IncompleteSignatureException", 403, `The signature does not cover ${required}.`);
    }
  }
  return undefined;
}
