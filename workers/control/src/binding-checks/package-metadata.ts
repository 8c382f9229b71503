// The check of a `package` binding (docs/bindings.md, "Package ownership"): a package registry is a
// shared host, so nothing at its origin can name a passport; what the owner alone controls is the
// metadata they publish with the package. The owner proves the package by publishing a
// back-reference to the passport in it, as the MCP Registry proves a server's package by its
// `mcpName` (npm) or a line in its README (PyPI). Two registries are read, each from its public
// API: npm (the package.json of the bound version, or of the version the `latest` dist-tag points
// to) and PyPI (the project's description, its README as PyPI serves it, of the bound release or
// the latest one).

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

/** A registry's answer as JSON, or the refusal that it is not JSON. */
function parseRegistryAnswer(
  body: string,
  url: string,
): { ok: true; document: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, document: JSON.parse(body) as unknown };
  } catch {
    return { ok: false, reason: `${url} is not valid JSON` };
  }
}

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
  const parsed = parseRegistryAnswer(body, url);
  if (!parsed.ok) return parsed;
  const { document } = parsed;
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

// PyPI (https://docs.pypi.org/api/json/): the JSON API serves a project's metadata, its README as
// `info.description`, at /pypi/{name}/json (the latest release) or /pypi/{name}/{version}/json.

/** PyPI's JSON API; the hosts simulator plays it in development and tests. */
const PYPI = "https://pypi.org";

/** A PyPI project a binding names: its normalized name (PEP 503) and, when pinned, its release. */
export interface PypiPackage {
  name: string;
  version: string | undefined;
}

// PEP 508's project name (ASCII letters and digits, with ., _ or - inside), at most 200 characters.
const PYPI_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,198}[A-Za-z0-9])?$/;
const PYPI_VERSION = /^[0-9A-Za-z.+!_-]{1,128}$/;

/** PEP 503 normalization: lower case, each run of `-`, `_` and `.` one `-`; how PyPI compares names. */
function normalizedPypiName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

function pypiPackage(name: string | undefined, version: string | undefined): PypiPackage | undefined {
  if (!name || !PYPI_NAME.test(name)) return undefined;
  if (version !== undefined && !PYPI_VERSION.test(version)) return undefined;
  return { name: normalizedPypiName(name), version };
}

/**
 * The PyPI project a `package` binding's value names, or undefined for anything else: a package
 * URL (`pkg:pypi/name@1.2.3`, the version optional) or the project's page on pypi.org
 * (`https://pypi.org/project/name/`, optionally with the release: `/project/name/1.2.3/`).
 */
export function pypiPackageOf(value: string): PypiPackage | undefined {
  if (value.startsWith("pkg:pypi/")) {
    const path = value.slice("pkg:pypi/".length).split(/[?#]/)[0] ?? "";
    const at = path.indexOf("@");
    const name = at === -1 ? path : path.slice(0, at);
    return pypiPackage(decoded(name), at === -1 ? undefined : decoded(path.slice(at + 1)));
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" || url.hostname !== "pypi.org") return undefined;
  const match = /^\/project\/([^/]+)(?:\/([^/]+))?\/?$/.exec(url.pathname);
  if (!match) return undefined;
  return pypiPackage(decoded(match[1] ?? ""), match[2] === undefined ? undefined : decoded(match[2]));
}

/** The JSON API URL checked: the pinned release, or the project (its latest release). */
export function pypiMetadataUrl(pkg: PypiPackage): string {
  const name = encodeURIComponent(pkg.name);
  return pkg.version === undefined
    ? `${PYPI}/pypi/${name}/json`
    : `${PYPI}/pypi/${name}/${encodeURIComponent(pkg.version)}/json`;
}

/** The README line that names the passport: `passport: {id or resolver URL}`, alone on its line. */
export const PYPI_BACK_REFERENCE = "passport:";
// The line may sit in an HTML comment (`<!-- passport: psp_… -->`), so the rendered README need not show it.
const PYPI_LINE = /^[ \t]*(?:<!--[ \t]*)?passport:[ \t]*(\S+?)[ \t]*(?:-->)?[ \t]*$/gm;

/**
 * Reads the JSON API's answer for `pkg`: it is that project's (names compared after PEP 503
 * normalization), and a line of its description (the README) names the passport. Lines naming
 * only other passports are a refusal that says so.
 */
export function readPypiBackReference(
  body: string,
  url: string,
  pkg: PypiPackage,
  names: { identityId: string; resolverUrl: string },
): BackReference {
  const parsed = parseRegistryAnswer(body, url);
  if (!parsed.ok) return parsed;
  const { document } = parsed;
  const info = (document as { info?: unknown } | null)?.info;
  if (typeof info !== "object" || info === null || Array.isArray(info)) {
    return { ok: false, reason: `${url} is not PyPI project metadata (no "info")` };
  }
  const metadata = info as Record<string, unknown>;
  const name = typeof metadata.name === "string" ? normalizedPypiName(metadata.name) : undefined;
  if (name !== pkg.name) return { ok: false, reason: `${url} describes ${String(metadata.name)}, not ${pkg.name}` };
  const release = typeof metadata.version === "string" ? ` ${metadata.version}` : "";
  const description = typeof metadata.description === "string" ? metadata.description : "";
  const named = [...description.matchAll(PYPI_LINE)].map((line) => line[1] as string);
  if (named.length === 0) {
    return {
      ok: false,
      reason: `the description of ${pkg.name}${release} has no "${PYPI_BACK_REFERENCE} ${names.identityId}" line`,
    };
  }
  if (!named.some((value) => value === names.identityId || value === names.resolverUrl)) {
    return {
      ok: false,
      reason: `the description of ${pkg.name}${release} names another passport (${named.join(", ").slice(0, 300)}), not ${names.identityId}`,
    };
  }
  return { ok: true };
}
