import type { PassportView } from "../api/views.ts";

/**
 * What a customer hands to consumers of a passport (spec 4.4 sharing surfaces): the resolver's
 * links, a `passport verify` command and the SDK call with this id, its family and organisation,
 * and signature keys pinned from a file the consumer saved once (never taken from the answer);
 * for agent passports, the agent action envelope link.
 */
export function ShareSection(props: { passport: PassportView; resolverBase: string }) {
  const { passport, resolverBase: base } = props;
  const id = passport.identity_id;
  const org = passport.organisation.id;
  const cli = [
    `curl -fsS -o passport-keys.json ${base}/.well-known/jwks.json   # once; compare it out of band, then keep it`,
    `passport verify ${id} --family ${passport.family} --org ${org} --jwks passport-keys.json --resolver ${base}`,
  ].join("\n");
  const sdk = [
    `import { readFileSync } from "node:fs";`,
    `import { Verifier } from "@passport/verifier";`,
    "",
    `const pinnedKeySet = JSON.parse(readFileSync("passport-keys.json", "utf8"));`,
    `const verifier = new Verifier({ resolver: "${base}", jwks: pinnedKeySet });`,
    `const result = await verifier.verify("${id}", { family: "${passport.family}", organisation: "${org}" });`,
    `if (result.outcome !== "ok") throw new Error(\`${id}: \${result.reason}\`);`,
  ].join("\n");
  const badge = `${base}/api/p/${id}/badge.svg`;
  const page = `${base}/p/${id}`;
  const embed = [
    `<a href="${page}"><img src="${badge}" alt="${passport.family === "api" ? "API" : "Agent"} passport ${id}: status"></a>`,
    "",
    `[![Passport status](${badge})](${page})`,
  ].join("\n");
  return (
    <section aria-labelledby="share-heading" id="share">
      <h3 id="share-heading">Share and verify</h3>
      <p class="hint">
        Give consumers the identity id and these checks. The keys file is pinned: consumers fetch it once and compare it
        out of band, so a changed key is noticed rather than trusted.
      </p>
      <h4>Command line</h4>
      <pre id="share-cli">{cli}</pre>
      <button type="button" class="secondary small" data-copy="share-cli" data-copy-what="Command" hidden>
        Copy command
      </button>
      <h4>SDK (TypeScript)</h4>
      <pre id="share-sdk">{sdk}</pre>
      <button type="button" class="secondary small" data-copy="share-sdk" data-copy-what="SDK snippet" hidden>
        Copy snippet
      </button>
      <h4>Status badge</h4>
      <p class="hint">
        An image the resolver draws from the published record: family, lifecycle state and whether the primary binding
        is verified. It changes when the record does. HTML, then Markdown:
      </p>
      <pre id="share-badge">{embed}</pre>
      <button type="button" class="secondary small" data-copy="share-badge" data-copy-what="Badge snippet" hidden>
        Copy snippet
      </button>
      {passport.family === "agent" ? (
        <p>
          <a href={`${base}/api/agent-envelope?${new URLSearchParams({ target: id })}`}>Agent action envelope</a> (for
          agents acting on this passport)
        </p>
      ) : null}
    </section>
  );
}
