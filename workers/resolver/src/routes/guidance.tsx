import { Hono } from "hono";
import { cacheHeaders } from "../edge-cache.ts";
import { CORS_HEADERS } from "../http.ts";
import { Layout, PAGE_SECURITY_HEADERS } from "../views/layout.tsx";

export const guidance = new Hono<{ Bindings: Env }>();

const RULES: [string, string, string][] = [
  ["The manifest is claimed by more than one passport", "ambiguous_target", "repair_resolver_posture"],
  ["No published passport for the target", "not_found", "view_developer_guidance"],
  ["The passport is not an agent passport", "family_mismatch", "view_developer_guidance"],
  ["The passport no longer binds the manifest asked about", "binding_mismatch", "repair_resolver_posture"],
  ["Suspended, revoked or retired", "lifecycle_…", "repair_resolver_posture"],
  ["Degraded or unavailable", "availability_…", "repair_resolver_posture"],
  [
    "A required claim has no evidence, or only expired evidence",
    "missing_evidence / stale_evidence",
    "improve_resolver_posture",
  ],
  ["Reactivated and not yet re-checked", "recheck_required", "improve_resolver_posture"],
  ["Otherwise", "proof_current", "view_resolver_proof"],
];

/** The developer guidance every envelope links to: what its answers mean and how to improve them. */
guidance.get("/agent-envelope", (c) => {
  const claims = JSON.parse(c.env.ENVELOPE_REQUIRED_CLAIMS) as string[];
  return c.html(
    <Layout title="Agent action envelope: developer guidance">
      <h1>Agent action envelope</h1>
      <p>
        <code>GET /api/agent-envelope?target=…</code> takes an agent identity id or the URL of an agent manifest and
        says what the published passport record shows about it. It is read-only routing information: it grants no
        authority, approval or permission, and your local policy decides. Re-check the record before relying on it.
      </p>
      <h2>Rules, first match wins</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">condition</th>
            <th scope="col">result</th>
            <th scope="col">recommended_path</th>
          </tr>
        </thead>
        <tbody>
          {RULES.map(([condition, result, path]) => (
            <tr>
              <td>{condition}</td>
              <td>
                <code>{result}</code>
              </td>
              <td>
                <code>{path}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Required evidence claims</h2>
      <ul>
        {claims.map((claim) => (
          <li>
            <code>{claim}</code>
          </li>
        ))}
      </ul>
      <p>
        Bind the manifest URL to your agent passport in the Dashboard, add evidence for each claim with a fresh-until
        time, and keep the passport active.
      </p>
    </Layout>,
    200,
    { ...CORS_HEADERS, ...cacheHeaders("short"), ...PAGE_SECURITY_HEADERS },
  );
});
