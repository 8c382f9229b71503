import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  npmMetadataUrl,
  npmPackageOf,
  pypiMetadataUrl,
  pypiPackageOf,
} from "../../workers/control/src/binding-checks/package-metadata.ts";
import { type Body, Caller, resolve } from "../support/api.ts";
import { dashboard } from "../support/control-fixtures.ts";
import { publishNpm, publishPypi, pypiAnswers, registryAnswers } from "../support/hosts.ts";
import { recheckAt } from "../support/rechecks.ts";

// Package ownership (docs/bindings.md, "Package ownership"): an npm package binding is proven by a
// back-reference to the passport in the package.json the registry serves, a PyPI one by a
// `passport: {id}` line in the description (README) PyPI's JSON API serves; both read through the
// outbound adapter (the hosts simulator plays registry.npmjs.org and pypi.org), and re-checked
// like any proof.

const uniqueName = (scope = "agents") => `@${scope}-${crypto.randomUUID().slice(0, 8)}/tool`;
const purl = (name: string, version?: string) => `pkg:npm/${name.replace("@", "%40")}${version ? `@${version}` : ""}`;

async function agentWithPackage(caller: Caller, value: string) {
  const passport = await caller.createPassport({
    family: "agent",
    display_name: "Packaged agent",
    bindings: [{ class: "package", value }],
  });
  return { id: passport.identity_id as string, bindingId: passport.bindings[0].id as string };
}

function verify(caller: Caller, id: string, bindingId: string): Promise<Body> {
  return caller.json("POST", `/v1/passports/${id}/bindings/${bindingId}/verify`);
}

async function bindingView(caller: Caller, id: string, bindingId: string): Promise<Body> {
  const passport = await caller.json("GET", `/v1/passports/${id}`);
  return passport.bindings.find((b: Body) => b.id === bindingId);
}

describe("npm package references", () => {
  it("are read from package URLs and npmjs.com package pages, scoped or not, pinned or not", () => {
    expect(npmPackageOf("pkg:npm/%40example/agent@1.2.3")).toEqual({ name: "@example/agent", version: "1.2.3" });
    expect(npmPackageOf("pkg:npm/left-pad")).toEqual({ name: "left-pad", version: undefined });
    expect(npmPackageOf("pkg:npm/left-pad@1.3.0?repository_url=x#lib")).toEqual({
      name: "left-pad",
      version: "1.3.0",
    });
    expect(npmPackageOf("https://www.npmjs.com/package/@example/agent")).toEqual({
      name: "@example/agent",
      version: undefined,
    });
    expect(npmPackageOf("https://www.npmjs.com/package/left-pad/v/1.3.0")).toEqual({
      name: "left-pad",
      version: "1.3.0",
    });
    expect(npmMetadataUrl({ name: "@example/agent", version: undefined })).toBe(
      "https://registry.npmjs.org/@example%2fagent/latest",
    );
    expect(npmMetadataUrl({ name: "left-pad", version: "1.3.0" })).toBe("https://registry.npmjs.org/left-pad/1.3.0");
    // Other registries, and names npm would not publish, are not npm packages.
    for (const value of [
      "pkg:pypi/requests@2.0",
      "pkg:npm/",
      "pkg:npm/Upper-Case",
      "pkg:npm/a%2",
      "https://pypi.org/project/requests",
      "https://www.npmjs.com/~someone",
      "http://www.npmjs.com/package/left-pad",
    ]) {
      expect(npmPackageOf(value), value).toBeUndefined();
    }
  });
});

describe("package bindings", () => {
  it("go claimed -> verified when the latest package.json names the passport, with observed evidence", async () => {
    const caller = await Caller.create("editor");
    const name = uniqueName();
    const { id, bindingId } = await agentWithPackage(caller, purl(name));
    const url = `https://registry.npmjs.org/${name.replace("/", "%2f")}/latest`;

    // Not yet published: the instructions say where the back-reference goes.
    const first = await verify(caller, id, bindingId);
    expect(first.result).toBe("not_proven");
    expect(first.reason).toBe(`${url} answered HTTP 404`);
    expect(first.instructions).toEqual({ package_metadata: { url, field: "passport", value: id } });

    await publishNpm(name, "1.0.0", { passport: id }, { latest: true });
    const proven = await verify(caller, id, bindingId);
    expect(proven.result).toBe("verified");
    const binding = proven.passport.bindings[0];
    expect(binding.verification).toMatchObject({ state: "verified", method: "document_names_id" });
    const evidence = proven.passport.evidence.find((e: Body) => e.id === binding.verification.evidence);
    expect(evidence).toMatchObject({ basis: "observed", claim: "binding.package_control", scope: url });
    expect((await resolve(id)).record.bindings[0].verification.state).toBe("verified");
  });

  it("accept the resolver URL or a list as the back-reference; a pinned version is the one read", async () => {
    const caller = await Caller.create("editor");
    const name = uniqueName();
    const { id, bindingId } = await agentWithPackage(caller, `https://www.npmjs.com/package/${name}/v/2.0.0`);
    const resolverUrl = `${env.RESOLVER_BASE_URL.replace(/\/$/, "")}/p/${id}`;
    // The latest version names nobody; the pinned one names the passport, by its resolver URL, in a list.
    await publishNpm(name, "3.0.0", {}, { latest: true });
    await publishNpm(name, "2.0.0", { passport: ["psp_someone_else", resolverUrl] });
    const proven = await verify(caller, id, bindingId);
    expect(proven.result).toBe("verified");
    const evidence = proven.passport.evidence.find(
      (e: Body) => e.id === proven.passport.bindings[0].verification.evidence,
    );
    expect(evidence.scope).toBe(`https://registry.npmjs.org/${name.replace("/", "%2f")}/2.0.0`);
  });

  it("are refused when the back-reference names another passport, is missing, or the registry answers for another package", async () => {
    const caller = await Caller.create("editor");
    const name = uniqueName();
    const { id, bindingId } = await agentWithPackage(caller, purl(name, "1.0.0"));
    const other = await agentWithPackage(caller, purl(uniqueName()));

    await publishNpm(name, "1.0.0", { passport: other.id });
    let outcome = await verify(caller, id, bindingId);
    expect(outcome.result).toBe("not_proven");
    expect(outcome.reason).toBe(`the package.json of ${name} 1.0.0 names another passport (${other.id}), not ${id}`);

    await publishNpm(name, "1.0.0", { mcpName: "io.github.example/tool" });
    outcome = await verify(caller, id, bindingId);
    expect(outcome.reason).toBe(`the package.json of ${name} 1.0.0 has no "passport" member naming ${id}`);

    await publishNpm(name, "1.0.0", { name: "@elsewhere/tool", passport: id });
    outcome = await verify(caller, id, bindingId);
    expect(outcome.reason).toContain(`describes @elsewhere/tool, not ${name}`);
    expect((await bindingView(caller, id, bindingId)).verification).toEqual({ state: "claimed" });
  });

  it("other registries stay claimed, with a reason that says which packages can be proven", async () => {
    const caller = await Caller.create("editor");
    const { id, bindingId } = await agentWithPackage(caller, "pkg:gem/passport-agent@1.0");
    const outcome = await verify(caller, id, bindingId);
    expect(outcome.result).toBe("not_proven");
    expect(outcome.instructions.unprovable).toContain("Only npm and PyPI packages are proven so far");
    expect((await bindingView(caller, id, bindingId)).verification).toEqual({ state: "claimed" });
  });

  it("lapse when a new latest version drops the back-reference, stay verified while the registry fails, and recover", async () => {
    const caller = await Caller.create("editor");
    const name = uniqueName();
    const { id, bindingId } = await agentWithPackage(caller, purl(name));
    await publishNpm(name, "1.0.0", { passport: id }, { latest: true });
    expect((await verify(caller, id, bindingId)).result).toBe("verified");

    // The registry is down: no answer about the proof, so it holds.
    let view = await bindingView(caller, id, bindingId);
    await registryAnswers({ [`/${name.replace("/", "%2f")}/latest`]: { status: 503 } });
    expect((await recheckAt(new Date(Date.parse(view.next_check_at)))).get(bindingId)).toBe("unreachable");
    view = await bindingView(caller, id, bindingId);
    expect(view.verification.state).toBe("verified");

    await publishNpm(name, "1.1.0", {}, { latest: true });
    expect((await recheckAt(new Date(Date.parse(view.next_check_at)))).get(bindingId)).toBe("mismatch");
    view = await bindingView(caller, id, bindingId);
    expect(view.verification.state).toBe("lapsed");
    expect(view.checks[0].reason).toContain(`has no "passport" member naming ${id}`);
    expect((await resolve(id)).record.bindings[0].verification.state).toBe("lapsed");

    await publishNpm(name, "1.2.0", { passport: id }, { latest: true });
    expect((await recheckAt(new Date(Date.parse(view.next_check_at)))).get(bindingId)).toBe("verified");
    expect((await resolve(id)).record.bindings[0].verification.state).toBe("verified");
  });
});

const uniquePypiName = () => `passport-agent-${crypto.randomUUID().slice(0, 8)}`;
const readme = (line: string) => `# Passport agent\n\nAn agent.\n\n${line}\n\n## Usage\n\npip install it.\n`;

describe("PyPI project references", () => {
  it("are read from package URLs and pypi.org project pages, names normalized as PyPI compares them", () => {
    expect(pypiPackageOf("pkg:pypi/Passport_Agent@1.2.3")).toEqual({ name: "passport-agent", version: "1.2.3" });
    expect(pypiPackageOf("pkg:pypi/requests")).toEqual({ name: "requests", version: undefined });
    expect(pypiPackageOf("https://pypi.org/project/Requests/")).toEqual({ name: "requests", version: undefined });
    expect(pypiPackageOf("https://pypi.org/project/requests/2.32.3/")).toEqual({ name: "requests", version: "2.32.3" });
    expect(pypiMetadataUrl({ name: "requests", version: undefined })).toBe("https://pypi.org/pypi/requests/json");
    expect(pypiMetadataUrl({ name: "requests", version: "2.32.3" })).toBe("https://pypi.org/pypi/requests/2.32.3/json");
    for (const value of [
      "pkg:npm/left-pad",
      "pkg:pypi/",
      "pkg:pypi/-bad",
      "https://pypi.org/user/someone/",
      "http://pypi.org/project/requests/",
      "https://test.pypi.org/project/requests/",
    ]) {
      expect(pypiPackageOf(value), value).toBeUndefined();
    }
  });
});

describe("PyPI package bindings", () => {
  it("go claimed -> verified when the latest release's description has a passport line naming it", async () => {
    const caller = await Caller.create("editor");
    const name = uniquePypiName();
    const { id, bindingId } = await agentWithPackage(caller, `https://pypi.org/project/${name}/`);
    const url = `https://pypi.org/pypi/${name}/json`;

    const first = await verify(caller, id, bindingId);
    expect(first.result).toBe("not_proven");
    expect(first.reason).toBe(`${url} answered HTTP 404`);
    expect(first.instructions).toEqual({ package_metadata: { url, field: "description", value: `passport: ${id}` } });

    // The line may be hidden from the rendered README in an HTML comment.
    await publishPypi(name, "1.0.0", readme(`<!-- passport: ${id} -->`), { latest: true });
    const proven = await verify(caller, id, bindingId);
    expect(proven.result).toBe("verified");
    const binding = proven.passport.bindings[0];
    expect(binding.verification).toMatchObject({ state: "verified", method: "document_names_id" });
    const evidence = proven.passport.evidence.find((e: Body) => e.id === binding.verification.evidence);
    expect(evidence).toMatchObject({ basis: "observed", claim: "binding.package_control", scope: url });
    expect((await resolve(id)).record.bindings[0].verification.state).toBe("verified");
  });

  it("read the pinned release, accept the resolver URL, and are refused for another passport, no line or another project", async () => {
    const caller = await Caller.create("editor");
    const name = uniquePypiName();
    const { id, bindingId } = await agentWithPackage(caller, `pkg:pypi/${name.toUpperCase()}@2.0.0`);
    const other = await agentWithPackage(caller, `pkg:pypi/${uniquePypiName()}`);
    const resolverUrl = `${env.RESOLVER_BASE_URL.replace(/\/$/, "")}/p/${id}`;

    await publishPypi(name, "2.0.0", readme(`passport: ${other.id}`));
    let outcome = await verify(caller, id, bindingId);
    expect(outcome.result).toBe("not_proven");
    expect(outcome.reason).toBe(`the description of ${name} 2.0.0 names another passport (${other.id}), not ${id}`);

    // A mention in running text is not the line: the back-reference is a line of its own.
    await publishPypi(name, "2.0.0", readme(`See passport ${id} for who runs this.`));
    outcome = await verify(caller, id, bindingId);
    expect(outcome.reason).toBe(`the description of ${name} 2.0.0 has no "passport: ${id}" line`);

    await publishPypi(name, "2.0.0", readme(`passport: ${id}`), { answerName: "someone-elses-project" });
    outcome = await verify(caller, id, bindingId);
    expect(outcome.reason).toContain(`describes someone-elses-project, not ${name}`);
    expect((await bindingView(caller, id, bindingId)).verification).toEqual({ state: "claimed" });

    // Names compare as PyPI compares them (PEP 503); the resolver URL names the passport too.
    await publishPypi(name, "2.0.0", readme(`passport: ${resolverUrl}`), { answerName: name.replace(/-/g, "_") });
    const proven = await verify(caller, id, bindingId);
    expect(proven.result).toBe("verified");
    expect(proven.passport.evidence.find((e: Body) => e.claim === "binding.package_control").scope).toBe(
      `https://pypi.org/pypi/${name}/2.0.0/json`,
    );
  });

  it("lapse when a new latest release drops the line, hold while PyPI fails, and recover", async () => {
    const caller = await Caller.create("editor");
    const name = uniquePypiName();
    const { id, bindingId } = await agentWithPackage(caller, `pkg:pypi/${name}`);
    await publishPypi(name, "1.0.0", readme(`passport: ${id}`), { latest: true });
    expect((await verify(caller, id, bindingId)).result).toBe("verified");

    let view = await bindingView(caller, id, bindingId);
    await pypiAnswers({ [`/pypi/${name}/json`]: { status: 503 } });
    expect((await recheckAt(new Date(Date.parse(view.next_check_at)))).get(bindingId)).toBe("unreachable");
    view = await bindingView(caller, id, bindingId);
    expect(view.verification.state).toBe("verified");

    await publishPypi(name, "1.1.0", readme("No passport here."), { latest: true });
    expect((await recheckAt(new Date(Date.parse(view.next_check_at)))).get(bindingId)).toBe("mismatch");
    view = await bindingView(caller, id, bindingId);
    expect(view.verification.state).toBe("lapsed");
    expect((await resolve(id)).record.bindings[0].verification.state).toBe("lapsed");

    await publishPypi(name, "1.2.0", readme(`passport: ${id}`), { latest: true });
    expect((await recheckAt(new Date(Date.parse(view.next_check_at)))).get(bindingId)).toBe("verified");
    expect((await resolve(id)).record.bindings[0].verification.state).toBe("verified");
  });
});

describe("the Dashboard's package bindings", () => {
  it("say what to put in the package's metadata, in the add form and after a check that did not prove it", async () => {
    const caller = await Caller.create("editor");
    const name = uniquePypiName();
    const { id, bindingId } = await agentWithPackage(caller, `pkg:pypi/${name}`);
    const page = await (await dashboard(caller, `/dashboard/passports/${id}`)).text();
    expect(page).toContain("Package bindings: what to put in your package&#39;s metadata");
    expect(page).toContain(`<code>&quot;passport&quot;: &quot;${id}&quot;</code>`);
    expect(page).toContain(`<code>passport: ${id}</code>`);

    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
    const checked = await dashboard(caller, `/dashboard/passports/${id}/bindings/${bindingId}/verify`, { csrf });
    const html = await checked.text();
    expect(html).toContain(`https://pypi.org/pypi/${name}/json answered HTTP 404`);
    expect(html).toContain(`has this line of its own, as <code>https://pypi.org/pypi/${name}/json</code> serves it`);
    expect(html).toContain(`<code>&lt;!-- passport: ${id} --&gt;</code>`);
  });
});
