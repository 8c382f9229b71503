import type { BindingClass, PublicSigningKey, VerificationMethod } from "@passport/domain";
import { type FetchFailure, fetchChecked, type OutboundPolicy, refusal, type Transport } from "../outbound/fetch.ts";
import { cardSignedBy, type ProvenKey } from "./card-signatures.ts";
import {
  BACK_REFERENCE_FIELD,
  type BackReference,
  npmMetadataUrl,
  npmPackageOf,
  PYPI_BACK_REFERENCE,
  pypiMetadataUrl,
  pypiPackageOf,
  readBackReference,
  readPypiBackReference,
} from "./package-metadata.ts";
import { DIRECTORY_MEDIA_TYPES, readKeyDirectory } from "./signing-keys.ts";

// The control checks per binding class (docs/bindings.md). Each check fetches only the bound host
// (or the operator's DNS over HTTPS resolver) through the outbound adapter, and either proves
// control, with the exact URL checked, or says precisely why not and what to publish.

const WELL_KNOWN_PATH = "/.well-known/passport-identity.json";
const DNS_LABEL = "_passport-identity";
/** How long a successful check proves control; the scheduled re-check runs before it ends. */
export const PROOF_LIFETIME_MS = 7 * 24 * 3600 * 1000;

export interface CheckTarget {
  identityId: string;
  resolverUrl: string;
  class: BindingClass;
  value: string;
  /** Required in the well-known document or TXT record until the binding was first verified. */
  challenge: string | undefined;
  /** A manifest binding: the keys the passport proves now, to tell whether they signed the card. */
  provenKeys?: readonly ProvenKey[];
}

export interface Instructions {
  /** Publish this JSON at this URL (http_well_known). */
  well_known?: { url: string; content_type: "application/json"; document: unknown };
  /** Or publish this TXT record (dns_txt). */
  dns_txt?: { name: string; value: string };
  /** Make the bound document name the identity id or its resolver URL (document_names_id). */
  document?: { url: string; must_name: string[] };
  /** A signing_keys binding: serve a JWK Set of public keys at this URL naming the passport. */
  key_directory?: { url: string; content_type: string; document: unknown };
  /**
   * A package binding: publish a version whose metadata names the passport. npm: the package.json
   * member `field`; PyPI: a `passport: {id}` line in the description (README), `field` "description".
   */
  package_metadata?: { url: string; field: string; value: string };
  /** Why the service cannot prove this binding: it stays claimed. */
  unprovable?: string;
}

/**
 * A check's answer. A failure marked `unreachable` got no answer about the proof (the host or the
 * DNS resolver timed out, failed or said "not now"); any other failure is an answer that does not
 * prove control, which contradicts a proof the binding held.
 */
export type CheckResult =
  | {
      ok: true;
      method: VerificationMethod;
      scope: string;
      claim: string;
      /** signing_keys: the keys the directory holds; manifest: the passport's proven keys that signed the card. */
      keys?: PublicSigningKey[];
    }
  | { ok: false; reason: string; unreachable?: true };

export interface Checker {
  transport: Transport;
  policy: OutboundPolicy;
  dohUrl: string;
}

const DOCUMENT_CLASSES = new Set<BindingClass>(["manifest", "mcp_surface", "openapi"]);
const ORIGIN_CLASSES = new Set<BindingClass>(["endpoint", "documentation"]);

function httpsUrl(value: string): URL | undefined {
  try {
    const url = new URL(value);
    if (url.protocol === "wss:") url.protocol = "https:";
    return url.protocol === "https:" || url.protocol === "http:" ? url : undefined;
  } catch {
    return undefined;
  }
}

function txtValue(target: CheckTarget): string {
  return `passport-identity=${target.identityId}${target.challenge ? ` challenge=${target.challenge}` : ""}`;
}

/** What the claimant publishes so the binding can be verified, per its class. */
export function instructionsFor(target: CheckTarget): Instructions {
  if (target.class === "package") {
    const pkg = packageOf(target.value);
    if (!pkg) {
      return {
        unprovable:
          "Only npm and PyPI packages are proven so far: bind pkg:npm/{name}[@version], https://www.npmjs.com/package/{name}, pkg:pypi/{name}[@version] or https://pypi.org/project/{name}/. Any other package stays claimed.",
      };
    }
    return { package_metadata: { url: pkg.url, field: pkg.field, value: pkg.value(target.identityId) } };
  }
  const url = httpsUrl(target.value);
  if (url && target.class === "signing_keys") {
    return {
      key_directory: {
        url: url.href,
        content_type: DIRECTORY_MEDIA_TYPES[0],
        document: { passport: target.identityId, keys: [{ kty: "OKP", crv: "Ed25519", x: "…", kid: "…" }] },
      },
    };
  }
  if (url && DOCUMENT_CLASSES.has(target.class)) {
    return { document: { url: url.href, must_name: [target.identityId, target.resolverUrl] } };
  }
  if (url && ORIGIN_CLASSES.has(target.class)) {
    return {
      well_known: {
        url: `${url.origin}${WELL_KNOWN_PATH}`,
        content_type: "application/json",
        document: {
          identities: [
            { identity_id: target.identityId, ...(target.challenge ? { challenge: target.challenge } : {}) },
          ],
        },
      },
      dns_txt: { name: `${DNS_LABEL}.${url.hostname}`, value: txtValue(target) },
    };
  }
  if (target.class === "gateway") {
    return {
      unprovable:
        "A gateway or provider id is proven only by the provider's own statement: for an API passport from an AWS Marketplace acquisition, bind that acquisition's license ARN or aws-marketplace:{product code}. Otherwise it stays claimed.",
    };
  }
  return {
    unprovable: `A ${target.class} binding names nothing the service can fetch and check; it stays claimed.`,
  };
}

/** True when `text` (a JSON or YAML document) names the identity id or its resolver URL. */
function namesIdentity(text: string, target: CheckTarget): boolean {
  return text.includes(target.identityId) || text.includes(target.resolverUrl);
}

async function documentCheck(checker: Checker, target: CheckTarget, url: URL): Promise<CheckResult> {
  const accept =
    target.class === "openapi"
      ? ["application/json", "application/vnd.oai.openapi+json", "application/yaml", "text/yaml", "application/x-yaml"]
      : ["application/json", "application/ld+json"];
  const fetched = await fetchChecked(checker.transport, checker.policy, url.href, accept);
  if (!fetched.ok) return fetched;
  let document: unknown;
  if (fetched.contentType.includes("json")) {
    try {
      document = JSON.parse(fetched.body);
    } catch {
      return { ok: false, reason: `${fetched.url} is not valid JSON` };
    }
  }
  if (!namesIdentity(fetched.body, target)) {
    return { ok: false, reason: `${fetched.url} does not name ${target.identityId} or its resolver URL` };
  }
  const claim = target.class === "manifest" ? "agent.manifest_control" : `binding.${target.class}_control`;
  // A manifest (an A2A agent card) signed by the passport's own proven keys says so in the record.
  const signers = target.class === "manifest" ? await cardSignedBy(document, target.provenKeys ?? []) : [];
  // The scope is the bound URL that was checked, not where a same-origin redirect ended: that is
  // the address a consumer compares with the scope (docs/bindings.md).
  return {
    ok: true,
    method: "document_names_id",
    scope: url.href,
    claim,
    ...(signers.length > 0 ? { keys: signers.map((thumbprint) => ({ thumbprint })) } : {}),
  };
}

/** A key directory names the passport and holds only public keys; the keys seen are the check's result. */
async function keyDirectoryCheck(checker: Checker, target: CheckTarget, url: URL): Promise<CheckResult> {
  const fetched = await fetchChecked(checker.transport, checker.policy, url.href, DIRECTORY_MEDIA_TYPES);
  if (!fetched.ok) return fetched;
  const read = await readKeyDirectory(fetched.body, fetched.url, target);
  if (!read.ok) return read;
  return {
    ok: true,
    method: "document_names_id",
    scope: url.href,
    claim: "binding.signing_keys_control",
    keys: read.keys,
  };
}

async function wellKnownCheck(checker: Checker, target: CheckTarget, url: URL): Promise<CheckResult> {
  const wellKnown = `${url.origin}${WELL_KNOWN_PATH}`;
  const fetched = await fetchChecked(checker.transport, checker.policy, wellKnown, ["application/json"]);
  if (!fetched.ok) return fetched;
  let document: unknown;
  try {
    document = JSON.parse(fetched.body);
  } catch {
    return { ok: false, reason: `${wellKnown} is not valid JSON` };
  }
  const identities = (document as { identities?: unknown })?.identities;
  const entry = Array.isArray(identities)
    ? (identities as { identity_id?: unknown; challenge?: unknown }[]).find((i) => i?.identity_id === target.identityId)
    : undefined;
  if (!entry) return { ok: false, reason: `${wellKnown} does not name ${target.identityId}` };
  if (target.challenge && entry.challenge !== target.challenge) {
    return { ok: false, reason: `${wellKnown} names ${target.identityId} without this binding's challenge` };
  }
  return { ok: true, method: "http_well_known", scope: url.origin, claim: `binding.${target.class}_control` };
}

async function dnsCheck(checker: Checker, target: CheckTarget, url: URL): Promise<CheckResult> {
  const name = `${DNS_LABEL}.${url.hostname}`;
  const query = new URL(checker.dohUrl);
  query.searchParams.set("name", name);
  query.searchParams.set("type", "TXT");
  // The resolver is the operator's; the name asked about is the tenant's, so it is refused the same way.
  const fetched = await fetchChecked(checker.transport, { ...checker.policy, ownHosts: [] }, query.href, [
    "application/dns-json",
    "application/json",
  ]);
  // Whatever stops the operator's resolver from answering says nothing about the tenant's record.
  if (!fetched.ok) return { ok: false, reason: `DNS over HTTPS lookup failed: ${fetched.reason}`, unreachable: true };
  let answer: { Status?: number; Answer?: { type?: number; data?: string }[] };
  try {
    answer = JSON.parse(fetched.body);
  } catch {
    return { ok: false, reason: "the DNS over HTTPS answer is not valid JSON", unreachable: true };
  }
  // NXDOMAIN (3) is an answer: the name does not exist. SERVFAIL, REFUSED and the rest are not.
  if (answer.Status === 3) return { ok: false, reason: `no TXT record at ${name} (DNS status 3)` };
  if (answer.Status !== 0) {
    return { ok: false, reason: `the DNS lookup of ${name} failed (DNS status ${answer.Status})`, unreachable: true };
  }
  const values = (answer.Answer ?? [])
    .filter((record) => record.type === 16 && typeof record.data === "string")
    .map((record) => (record.data as string).replace(/"\s*"/g, "").replace(/^"|"$/g, "").replace(/\\(.)/g, "$1"));
  if (values.length === 0) return { ok: false, reason: `no TXT record at ${name}` };
  const wanted = txtValue(target);
  if (!values.some((value) => value.trim() === wanted)) {
    return { ok: false, reason: `no TXT record at ${name} reads "${wanted}"` };
  }
  return { ok: true, method: "dns_txt", scope: `${name} TXT`, claim: `binding.${target.class}_control` };
}

/** A package a binding names, on a registry the service reads: where its metadata is and how it is read. */
interface RegistryPackage {
  url: string;
  /** Where the back-reference goes, for the instructions. */
  field: string;
  /** What to write there. */
  value: (identityId: string) => string;
  read: (body: string, names: { identityId: string; resolverUrl: string }) => BackReference;
}

function packageOf(value: string): RegistryPackage | undefined {
  const npm = npmPackageOf(value);
  if (npm) {
    const url = npmMetadataUrl(npm);
    return {
      url,
      field: BACK_REFERENCE_FIELD,
      value: (id) => id,
      read: (body, names) => readBackReference(body, url, npm, names),
    };
  }
  const pypi = pypiPackageOf(value);
  if (pypi) {
    const url = pypiMetadataUrl(pypi);
    return {
      url,
      field: "description",
      value: (id) => `${PYPI_BACK_REFERENCE} ${id}`,
      read: (body, names) => readPypiBackReference(body, url, pypi, names),
    };
  }
  return undefined;
}

/** A package's published metadata names the passport (package-metadata.ts). */
async function packageCheck(checker: Checker, target: CheckTarget, pkg: RegistryPackage): Promise<CheckResult> {
  const fetched = await fetchChecked(checker.transport, checker.policy, pkg.url, ["application/json"]);
  if (!fetched.ok) return fetched;
  const read = pkg.read(fetched.body, target);
  if (!read.ok) return read;
  return { ok: true, method: "document_names_id", scope: pkg.url, claim: "binding.package_control" };
}

/**
 * Runs the check for one binding. Origin-bound classes try the well-known document, then the DNS
 * TXT record; the reason given when both fail names both.
 */
export async function checkBinding(checker: Checker, target: CheckTarget): Promise<CheckResult> {
  const pkg = target.class === "package" ? packageOf(target.value) : undefined;
  if (pkg) return packageCheck(checker, target, pkg);
  const url = httpsUrl(target.value);
  const unprovable = instructionsFor(target).unprovable;
  if (!url || unprovable) return { ok: false, reason: unprovable ?? "the bound value is not a URL" };
  // Plain http, IP literals, internal names and the service's own hosts are refused for every method.
  const refused = refusal(url, checker.policy);
  if (refused) return { ok: false, reason: refused };
  if (target.class === "signing_keys") return keyDirectoryCheck(checker, target, url);
  if (DOCUMENT_CLASSES.has(target.class)) return documentCheck(checker, target, url);
  const byDocument = await wellKnownCheck(checker, target, url);
  if (byDocument.ok) return byDocument;
  const byDns: CheckResult | FetchFailure = await dnsCheck(checker, target, url);
  if (byDns.ok) return byDns;
  const reason = `${byDocument.reason}; ${byDns.reason}`;
  // Either method could have proven control: only when both answered is the answer a contradiction.
  return byDocument.unreachable || byDns.unreachable ? { ok: false, reason, unreachable: true } : { ok: false, reason };
}
