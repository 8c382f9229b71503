// What the benchmarks that run in Node rather than in workerd (the verifier, the provider
// middleware) share: records signed and status tokens issued as the service does, and a paired
// comparison of two operations timed in this process, alternating their order every round.
import { performance } from "node:perf_hooks";
import { canonicalBytes, STATUS_TOKEN_LIFETIME_SECONDS, STATUS_TOKEN_TYPE } from "@passport/domain";
import { CompactSign, importJWK } from "jose";
import { signingKeyPair } from "../../dev-keys.mjs";
import { spread } from "./compare.mjs";

/**
 * Signs sealed records with a fresh ES256 bench key as the publisher does (a detached JWS over the
 * canonical bytes, served as `Passport-Signature`). Returns the key set a verifier pins, the
 * private key (for status tokens) and per record its id, served text and signature.
 */
export async function signRecords(records) {
  const { publicJwk, privateJwk } = await signingKeyPair("ES256", "bench");
  const jwks = { keys: [JSON.parse(publicJwk)] };
  const privateKey = await importJWK(JSON.parse(privateJwk), "ES256");
  const out = [];
  for (const record of records) {
    const jws = await new CompactSign(canonicalBytes(record))
      .setProtectedHeader({ alg: "ES256", kid: "bench", typ: "passport+jws" })
      .sign(privateKey);
    const [header, , signature] = jws.split(".");
    out.push({ id: record.identity_id, record, text: JSON.stringify(record), signature: `${header}..${signature}` });
  }
  return { jwks, records: out, privateKey };
}

/**
 * A status token as the status route signs one (docs/freshness.md, Status token): it names
 * `record`'s version and digest as current, issued at `iat` (seconds) for the token lifetime.
 */
export function statusToken(record, privateKey, iat = Math.floor(Date.now() / 1000)) {
  const claims = {
    identity_id: record.identity_id,
    family: record.family,
    lifecycle: record.state.lifecycle,
    publication: "published",
    record_version: record.record_version,
    digest: record.digest,
    iat,
    exp: iat + STATUS_TOKEN_LIFETIME_SECONDS,
  };
  return new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: "ES256", kid: "bench", typ: STATUS_TOKEN_TYPE })
    .sign(privateKey);
}

/** Runs `op` over `inputs` in turn, one call at a time, for `seconds`; returns the rate and latencies (ms). */
async function measure(op, inputs, seconds) {
  const latencies = [];
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  let i = 0;
  while (performance.now() < end) {
    const input = inputs[i++ % inputs.length];
    const t0 = performance.now();
    await op(input);
    latencies.push(performance.now() - t0);
  }
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99) };
}

/**
 * `pairs`: [{ name, baseline, subject: (input) => Promise, reference: (input) => Promise, before?: () => Promise }].
 * Warms each pair's two sides up, then times them in `rounds` rounds, alternating which goes first
 * (so drift between rounds cancels out); `before` runs before every timed side. Returns per pair
 * the spread of each side's figures and of the subject/reference ratios (`results`, as the report
 * prints them), and the raw runs per round (`runs`).
 */
export async function comparePaired(pairs, { rounds, seconds, warmup, log }, inputs = [undefined]) {
  for (const pair of pairs) {
    log(`warming up ${pair.name} and ${pair.baseline}`);
    await pair.before?.();
    await measure(pair.subject, inputs, warmup);
    await measure(pair.reference, inputs, warmup);
  }
  const runs = pairs.map(() => ({ subject: [], reference: [] }));
  for (let round = 0; round < rounds; round++) {
    log(`round ${round + 1} of ${rounds}`);
    for (const [i, pair] of pairs.entries()) {
      const order = (round + i) % 2 === 0 ? ["subject", "reference"] : ["reference", "subject"];
      for (const side of order) {
        await pair.before?.();
        runs[i][side].push(await measure(pair[side], inputs, seconds));
      }
    }
  }
  const results = pairs.map((pair, i) => {
    const { subject, reference } = runs[i];
    const ratio = (key) => spread(subject.map((s, r) => s[key] / reference[r][key]));
    const side = (list) => ({
      rps: spread(list.map((s) => s.rps)),
      p50: spread(list.map((s) => s.p50)),
      p99: spread(list.map((s) => s.p99)),
    });
    return {
      name: pair.name,
      baseline: pair.baseline,
      subject: side(subject),
      reference: side(reference),
      ratios: { rps: ratio("rps"), p50: ratio("p50"), p99: ratio("p99") },
    };
  });
  return { results, runs };
}
