// The check of a `package` binding (docs/bindings.md, "Package ownership"): a package registry is a
// shared host, so nothing at its origin can name a passport; what the owner alone controls is the
// metadata they publish with the package. The owner proves the package by publishing a
// back-reference to the passport in it, as the MCP Registry proves a server's package by its
// `mcpName`. Only npm is read so far: the package.json of the bound version (or of the version
// the `latest` dist-tag points to), from the registry's public API.

/** The npm registry's public API; the hosts simulator plays it in development and tests. */
const NPM_REGISTRY = "https://registry.npmjs.org";

/** The package.json member that names the passport, by identity id or resolver URL. */
export const BACK_REFERENCE_FIELD = "passport";

/** An npm package a binding names: its name (scoped or not) and, when pinned, its version. */
export interface NpmPackage {
  name: string;
  version: string | undefined;
}

// npm's own rule for new package names: lower case, URL-safe, at most 214 characters.
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const NPM_VERSION = /^[0-9A-Za-z.+-]{1,256}$/;

function decoded(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

function npmPackage(name: string | undefined, version: string | undefined): NpmPackage | undefined {
  if (!name || name.length > 214 || !NPM_NAME.test(name)) return undefined;
  if (version !== undefined && !NPM_VERSION.test(version)) return undefined;
  return { name, version };
}

/**
 * The npm package a `package` binding's value names, or undefined for any other registry or a
 * value that is not a package reference: a package URL (`pkg:npm/%40scope/name@1.2.3`, the
 * version optional; the purl specification percent-encodes the scope's `@`) or the package's page
 * on npmjs.com (`https://www.npmjs.com/package/@scope/name`, optionally `/v/1.2.3`).
 */
export function npmPackageOf(value: string): NpmPackage | undefined {
  if (value.startsWith("pkg:npm/")) {
    // Qualifiers (`?…`) and a subpath (`#…`) do not change which package is named.
    const path = value.slice("pkg:npm/".length).split(/[?#]/)[0] ?? "";
    const slash = path.lastIndexOf("/");
    const at = path.indexOf("@", slash + 1);
    const name = at === -1 ? path : path.slice(0, at);
    const version = at === -1 ? undefined : decoded(path.slice(at + 1));
    return npmPackage(decoded(name), version);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" || url.hostname !== "www.npmjs.com") return undefined;
  const match = /^\/package\/((?:@[^/]+\/)?[^/@]+)(?:\/v\/([^/]+))?\/?$/.exec(url.pathname);
  if (!match) return undefined;
  return npmPackage(decoded(match[1] ?? ""), match[2] === undefined ? undefined : decoded(match[2]));
}

/**
 * The registry URL of the package.json checked: the pinned version, or `latest`. A scoped name's
 * slash is encoded, as npm's clients send it.
 */
export function npmMetadataUrl(pkg: NpmPackage): string {
  const name = pkg.name.replace("/", "%2f");
  return `${NPM_REGISTRY}/${name}/${encodeURIComponent(pkg.version ?? "latest")}`;
}

export type BackReference = { ok: true } | { ok: false; reason: string };

/**
 * Reads the package.json the registry answered for `pkg`: it is that package's, and its
 * back-reference member names the passport (a string, or a list when one package serves several
 * passports). A back-reference that names only other passports is a refusal that says so.
 */
export function readBackReference(
  body: string,
  url: string,
  pkg: NpmPackage,
  names: { identityId: string; resolverUrl: string },
): BackReference {
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    return { ok: false, reason: `${url} is not valid JSON` };
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    return { ok: false, reason: `${url} is not a package.json` };
  }
  const metadata = document as Record<string, unknown>;
  if (metadata.name !== pkg.name) {
    return { ok: false, reason: `${url} describes ${String(metadata.name)}, not ${pkg.name}` };
  }
  const version = typeof metadata.version === "string" ? ` ${metadata.version}` : "";
  const reference = metadata[BACK_REFERENCE_FIELD];
  const named = (Array.isArray(reference) ? reference : [reference]).filter((v) => typeof v === "string");
  if (named.length === 0) {
    return {
      ok: false,
      reason: `the package.json of ${pkg.name}${version} has no "${BACK_REFERENCE_FIELD}" member naming ${names.identityId}`,
    };
  }
  if (!named.some((value) => value === names.identityId || value === names.resolverUrl)) {
    return {
      ok: false,
      reason: `the package.json of ${pkg.name}${version} names another passport (${named.join(", ").slice(0, 300)}), not ${names.identityId}`,
    };
  }
  return { ok: true };
}
