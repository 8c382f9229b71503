// The demo auditor's side of a re-evaluation, played by `npm start` like the hosts and marketplace
// simulators play theirs. A reactivated passport's flag clears only once each claim that had
// evidence has fresh evidence (docs/lifecycle.md#re-evaluation): the service's own checks renew
// what they observe, but a claim a trusted source attested needs that source to attest again. Out
// in the world the auditor is asked; here it answers by itself, within `intervalMs`, for the demo
// evidence it attested, so suspending and reactivating the demo agent (as the README suggests)
// brings its envelope back to current.
import { attestAsDemoAuditor, DEMO_AUDITOR, signDevelopmentToken } from "./dev-auth.mjs";

/**
 * Every `intervalMs`, asks the re-evaluation of each of `passports` (`{ id, evidence }`, evidence as
 * seeded) what it waits for, and attests afresh each claim of the auditor's it waits for.
 */
export function startDemoAuditor({ controlUrl, passports, intervalMs = 20_000, onOutput }) {
  const call = async (method, path, body) => {
    const response = await fetch(`${controlUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${await signDevelopmentToken()}`,
        ...(body ? { "content-type": "application/json" } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const answer = async () => {
    for (const { id, evidence } of passports) {
      const recheck = await call("GET", `/v1/passports/${id}/recheck`);
      if (!recheck.recheck_required) continue;
      for (const item of evidence) {
        if (item.source !== DEMO_AUDITOR || !recheck.pending.claims.includes(item.claim)) continue;
        const observed = { ...item, observed_at: new Date().toISOString().replace(/\.\d+Z$/, "Z") };
        const attestation = await attestAsDemoAuditor(id, observed);
        await call("POST", `/v1/passports/${id}/evidence`, { ...observed, attestation });
        onOutput?.(`demo auditor attested ${item.claim} of ${id} again for its re-evaluation`);
      }
    }
  };
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    answer()
      .catch((error) => onOutput?.(`demo auditor: ${error.message}`))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  return { stop: () => clearInterval(timer) };
}
