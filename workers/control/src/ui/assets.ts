import type { MiddlewareHandler } from "hono";

/**
 * The Dashboard's static files (workers/control/public/assets/), served by Workers Static Assets
 * with a year-long immutable cache (public/_headers). Pages link them as `?v=<content hash>`, so a
 * changed file is fetched anew: the hash is the SHA-256 of what the ASSETS binding serves, read
 * once per isolate, so there is no version to bump and no build step.
 */
const FILES = ["dashboard.css", "dashboard.js"] as const;
export type AssetFile = (typeof FILES)[number];

let hrefs: Record<AssetFile, string> | undefined;

async function versionedHref(assets: Fetcher, file: AssetFile): Promise<string> {
  const path = `/assets/${file}`;
  const response = await assets.fetch(`https://assets.invalid${path}`);
  if (!response.ok) throw new Error(`static asset ${path} answered ${response.status}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", await response.arrayBuffer()));
  const hex = Array.from(digest.subarray(0, 6), (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${path}?v=${hex}`;
}

async function loadHrefs(assets: Fetcher): Promise<Record<AssetFile, string>> {
  const entries = await Promise.all(FILES.map(async (file) => [file, await versionedHref(assets, file)] as const));
  return Object.fromEntries(entries) as Record<AssetFile, string>;
}

/** Middleware for every route that renders a page: makes `assetHref` ready before rendering. */
export const assetVersions: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  // Each request that finds no hashes reads them itself: workerd does not let one request await
  // I/O that another request started.
  hrefs ??= await loadHrefs(c.env.ASSETS);
  await next();
};

/** The content-hashed URL of a Dashboard static file; only under the `assetVersions` middleware. */
export function assetHref(file: AssetFile): string {
  if (!hrefs) throw new Error("assetHref called before the assetVersions middleware ran");
  return hrefs[file];
}
