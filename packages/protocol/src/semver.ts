/**
 * A small semantic-version range matcher for a policy's `versions` (docs/policy.md): comparator
 * sets joined by `||`, each a space-separated list of `^`, `~`, `>=`, `>`, `<=`, `<`, `=` or bare
 * versions, where a bare version may be partial or use `x`/`X`/`*` ("2", "2.x", "2.1.*").
 * Prerelease versions match only a comparator set naming a prerelease of the same
 * major.minor.patch, as npm does. Hyphen ranges and build-metadata ordering are not supported.
 * Written here so the verifier keeps no runtime dependencies.
 */

const PART = "(?:0|[1-9]\\d*|[xX*])";
const VERSION = `${PART}(?:\\.${PART}){0,2}(?:-[0-9A-Za-z.-]+)?(?:\\+[0-9A-Za-z.-]+)?`;
const COMPARATOR = `(?:\\^|~|>=|<=|>|<|=)?\\s*v?${VERSION}`;
const SET = `${COMPARATOR}(?:\\s+${COMPARATOR})*`;
/** The grammar of a range; the domain's zod schema uses the same expression. */
const VERSION_RANGE_PATTERN = `^\\s*${SET}(?:\\s*\\|\\|\\s*${SET})*\\s*$`;
/** Characters that make a `versions` value a range rather than one exact version string. */
const VERSION_RANGE_MARKER = "[\\^~<>=|*\\s]|(?:^|\\.)[xX](?:\\.|$)";

/**
 * What a policy's `versions` may be: one exact version (no range syntax) or a range. The domain's
 * zod schema (and so the published JSON Schema) imports this expression.
 */
export const VERSIONS_PATTERN = `^(?:(?![\\s\\S]*(?:${VERSION_RANGE_MARKER}))[\\s\\S]+|${VERSION_RANGE_PATTERN.slice(1, -1)})$`;

const RANGE = new RegExp(VERSION_RANGE_PATTERN);
const MARKER = new RegExp(VERSION_RANGE_MARKER);
const VERSIONS = new RegExp(VERSIONS_PATTERN);

interface SemVer {
  major: number;
  minor: number;
  patch: number;
  pre: (string | number)[];
}

type Op = ">=" | ">" | "<=" | "<" | "=";
interface Comparator {
  op: Op;
  version: SemVer;
}

/** True when `value` is written as a range (it must then parse), false when it is an exact version string. */
function isVersionRange(value: string): boolean {
  return MARKER.test(value);
}

/** True when `value` is an exact version string or a range this matcher understands. */
export function validVersions(value: string): boolean {
  return VERSIONS.test(value);
}

function parseVersion(text: string): SemVer | undefined {
  const match = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(
    text.trim(),
  );
  if (!match) return undefined;
  const pre = match[4] ? match[4].split(".").map((id) => (/^\d+$/.test(id) ? Number(id) : id)) : [];
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), pre };
}

function comparePre(a: (string | number)[], b: (string | number)[]): number {
  if (a.length === 0 || b.length === 0) return b.length - a.length; // a release ranks above its prereleases
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    if (typeof x === "number" && typeof y === "number") return x - y;
    if (typeof x === "number") return -1;
    if (typeof y === "number") return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

function compare(a: SemVer, b: SemVer): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch || comparePre(a.pre, b.pre);
}

const v = (major: number, minor: number, patch: number, pre: (string | number)[] = []): SemVer => ({
  major,
  minor,
  patch,
  pre,
});
/** The lowest version of a release line: `<` this excludes that line's prereleases too. */
const floor = (major: number, minor: number, patch: number) => v(major, minor, patch, [0]);

/** One comparator (`^1.2`, `>=2`, `2.x`) as plain `op version` pairs. */
function desugar(text: string): Comparator[] | undefined {
  const match = /^(\^|~|>=|<=|>|<|=)?\s*v?([^\s+-]+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(text);
  if (!match) return undefined;
  const op = match[1] ?? "";
  const parts = (match[2] ?? "").split(".");
  const pre = match[3] ? match[3].split(".").map((id) => (/^\d+$/.test(id) ? Number(id) : id)) : [];
  const nums: (number | undefined)[] = [];
  for (const part of parts) {
    if (/^[xX*]$/.test(part)) nums.push(undefined);
    else if (/^(0|[1-9]\d*)$/.test(part)) nums.push(Number(part));
    else return undefined;
  }
  // Anything after a wildcard is a wildcard: "2.x.3" reads as "2.x".
  const firstWild = nums.indexOf(undefined);
  const known = (firstWild === -1 ? nums : nums.slice(0, firstWild)) as number[];
  const [M, m, p] = known;
  const exact = known.length === 3;
  if (M === undefined) {
    return op === "<" || op === ">" ? [{ op: "<", version: floor(0, 0, 0) }] : [];
  }
  const lowest = v(M, m ?? 0, p ?? 0, exact ? pre : []);
  /** The first version above the partial one: "1.2" -> 1.3.0-0, "1" -> 2.0.0-0. */
  const above = m === undefined ? floor(M + 1, 0, 0) : p === undefined ? floor(M, m + 1, 0) : undefined;
  switch (op) {
    case "^": {
      const upper =
        M > 0 || m === undefined
          ? floor(M + 1, 0, 0)
          : m > 0 || p === undefined
            ? floor(0, m + 1, 0)
            : floor(0, 0, p + 1);
      return [
        { op: ">=", version: lowest },
        { op: "<", version: upper },
      ];
    }
    case "~":
      return [
        { op: ">=", version: lowest },
        { op: "<", version: m === undefined ? floor(M + 1, 0, 0) : floor(M, m + 1, 0) },
      ];
    case ">=":
      return [{ op: ">=", version: lowest }];
    case ">":
      return [above ? { op: ">=", version: above } : { op: ">", version: lowest }];
    case "<":
      return [{ op: "<", version: exact ? lowest : floor(M, m ?? 0, p ?? 0) }];
    case "<=":
      return [above ? { op: "<", version: above } : { op: "<=", version: lowest }];
    default:
      return above
        ? [
            { op: ">=", version: lowest },
            { op: "<", version: above },
          ]
        : [{ op: "=", version: lowest }];
  }
}

function holds(c: Comparator, version: SemVer): boolean {
  const order = compare(version, c.version);
  switch (c.op) {
    case ">=":
      return order >= 0;
    case ">":
      return order > 0;
    case "<=":
      return order <= 0;
    case "<":
      return order < 0;
    default:
      return order === 0;
  }
}

function setMatches(set: Comparator[], version: SemVer): boolean {
  if (!set.every((c) => holds(c, version))) return false;
  if (version.pre.length === 0) return true;
  // A prerelease matches only a set that names a prerelease of the same release line.
  return set.some(
    (c) =>
      c.version.pre.length > 0 &&
      !(c.version.pre.length === 1 && c.version.pre[0] === 0 && c.op === "<") &&
      c.version.major === version.major &&
      c.version.minor === version.minor &&
      c.version.patch === version.patch,
  );
}

/**
 * Whether `actual` satisfies `versions`: a range (see the module comment), or, when `versions`
 * has no range syntax, the exact same string. An `actual` that is not a full semantic version
 * never satisfies a range.
 * @example
 * versionSatisfies("2.4.1", "^2.1.0"); // true
 * versionSatisfies("2026-10", "2026-10"); // true (exact)
 */
export function versionSatisfies(actual: string, versions: string): boolean {
  if (!isVersionRange(versions)) return actual === versions;
  const sets = comparatorSets(versions);
  if (!sets) return false;
  const version = parseVersion(actual);
  if (!version) return false;
  return sets.some((set) => set !== undefined && setMatches(set, version));
}

/**
 * A range's comparator sets, one per `||` alternative (undefined for an alternative that does not
 * parse, which matches nothing), or undefined when the range is not well formed. A policy names a
 * few ranges and decides under them many times, so each range is parsed once (a bounded cache).
 */
function comparatorSets(versions: string): (Comparator[] | undefined)[] | undefined {
  const known = parsedRanges.get(versions);
  if (known !== undefined) return known ?? undefined;
  const sets = RANGE.test(versions) ? versions.split("||").map(comparatorSet) : undefined;
  if (parsedRanges.size >= PARSED_RANGES) parsedRanges.clear();
  parsedRanges.set(versions, sets ?? null);
  return sets;
}

function comparatorSet(alternative: string): Comparator[] | undefined {
  // "^ 1.2" and ">= 2" are one comparator each: join an operator to the version after it.
  const tokens = alternative
    .trim()
    .replace(/(\^|~|>=|<=|>|<|=)\s+/g, "$1")
    .split(/\s+/);
  const set: Comparator[] = [];
  for (const token of tokens) {
    const parsed = desugar(token);
    if (!parsed) return undefined;
    set.push(...parsed);
  }
  return set;
}

const parsedRanges = new Map<string, (Comparator[] | undefined)[] | null>();
const PARSED_RANGES = 256;
