import { env } from "cloudflare:workers";
import type { Answer } from "../../workers/hosts-sim/src/index.ts";
import type { ReceiverFixture } from "../../workers/hosts-sim/src/receiver.ts";

// Fixtures for the hosts simulator (workers/hosts-sim) the control plane's binding checks reach.

function simulator(): Fetcher {
  if (!env.OUTBOUND_SIMULATOR) throw new Error("the development configuration binds OUTBOUND_SIMULATOR");
  return env.OUTBOUND_SIMULATOR;
}

/** A fresh host name no other test uses. */
export function uniqueHost(label = "svc"): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}.example.com`;
}

/** Sets what `host` answers, per path. */
export async function serve(host: string, paths: Record<string, Answer>): Promise<void> {
  const response = await simulator().fetch(`https://hosts-sim.invalid/hosts/${host}`, {
    method: "PUT",
    body: JSON.stringify({ paths }),
  });
  if (response.status !== 204) throw new Error(`simulator refused host fixture: ${response.status}`);
}

/** Sets (or with an empty list removes) the TXT records at `name`. */
export async function txt(name: string, values: string[]): Promise<void> {
  const response = await simulator().fetch(`https://hosts-sim.invalid/dns/${name}`, {
    method: "PUT",
    body: JSON.stringify({ txt: values }),
  });
  if (response.status !== 204) throw new Error(`simulator refused DNS fixture: ${response.status}`);
}

/** Sets what the npm registry answers at `paths`; other packages on the registry are untouched. */
export async function registryAnswers(paths: Record<string, Answer>): Promise<void> {
  const response = await simulator().fetch("https://hosts-sim.invalid/hosts/registry.npmjs.org", {
    method: "PATCH",
    body: JSON.stringify({ paths }),
  });
  if (response.status !== 204) throw new Error(`simulator refused registry fixture: ${response.status}`);
}

/**
 * Publishes `metadata` (a package.json) as the npm registry's answer for `name` at `version` and,
 * when `latest` is set, for its `latest` dist-tag.
 */
export function publishNpm(
  name: string,
  version: string,
  metadata: Record<string, unknown>,
  options: { latest?: boolean } = {},
): Promise<void> {
  const answer = json({ name, version, ...metadata });
  const base = `/${name.replace("/", "%2f")}`;
  return registryAnswers({ [`${base}/${version}`]: answer, ...(options.latest ? { [`${base}/latest`]: answer } : {}) });
}

/**
 * Publishes a PyPI release of `name` whose description (README) is `description`, as PyPI's JSON
 * API answers it: at the release's URL and, when `latest` is set, at the project's.
 */
export async function publishPypi(
  name: string,
  version: string,
  description: string,
  options: { latest?: boolean; answerName?: string } = {},
): Promise<void> {
  const answer = json({
    info: { name: options.answerName ?? name, version, description, description_content_type: "text/markdown" },
    releases: {},
  });
  return pypiAnswers({
    [`/pypi/${name}/${version}/json`]: answer,
    ...(options.latest ? { [`/pypi/${name}/json`]: answer } : {}),
  });
}

/** Sets what PyPI's JSON API answers at `paths`; other projects are untouched. */
export async function pypiAnswers(paths: Record<string, Answer>): Promise<void> {
  const response = await simulator().fetch("https://hosts-sim.invalid/hosts/pypi.org", {
    method: "PATCH",
    body: JSON.stringify({ paths }),
  });
  if (response.status !== 204) throw new Error(`simulator refused PyPI fixture: ${response.status}`);
}

export const json = (body: unknown): Answer => ({ content_type: "application/json", body });

/** The Web Bot Auth key directory path and media type (docs/reciprocal-trust.md). */
export const KEY_DIRECTORY_PATH = "/.well-known/http-message-signatures-directory";
export const keyDirectory = (document: unknown): Answer => ({
  content_type: "application/http-message-signatures-directory+json",
  body: document,
});

/** Makes `host` a webhook receiver at `fixture.path` (workers/hosts-sim/src/receiver.ts). */
export async function receiver(host: string, fixture: ReceiverFixture): Promise<void> {
  const response = await simulator().fetch(`https://hosts-sim.invalid/receivers/${host}`, {
    method: "PUT",
    body: JSON.stringify(fixture),
  });
  if (response.status !== 204) throw new Error(`simulator refused receiver fixture: ${response.status}`);
}

/** One POST a receiver got, as it got it. */
export interface ReceivedPost {
  at: string;
  headers: Record<string, string>;
  body: string;
}

/** What the receiver `host` got so far, oldest first. */
export async function receivedBy(host: string): Promise<ReceivedPost[]> {
  const response = await simulator().fetch(`https://hosts-sim.invalid/receivers/${host}`);
  if (response.status !== 200) throw new Error(`${host} is not a receiver: ${response.status}`);
  return (await response.json<{ received: ReceivedPost[] }>()).received;
}
