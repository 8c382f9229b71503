import type { z } from "zod";
import type { BindingCheckView, PassportView } from "../api/views.ts";
import { Time } from "./layout.tsx";

type Binding = PassportView["bindings"][number];
type Check = z.infer<typeof BindingCheckView>;

/** The outcome of a "verify now" that did not prove control, shown beside its binding. */
export type CheckShown = Pick<Check, "binding_id" | "reason" | "instructions">;

const METHOD_LABELS = {
  http_well_known: "well-known document",
  dns_txt: "DNS TXT record",
  document_names_id: "the document names this identity",
  provider_statement: "provider statement",
} as const;

/**
 * A binding's proof state and the service's last check of it. A verified binding past its
 * freshness is shown as lapsed, as every consumer must treat it.
 */
export function BindingProof(props: { binding: Binding; now: number }) {
  const v = props.binding.verification;
  const check = props.binding.last_check;
  const expired = v.state === "verified" && Date.parse(v.fresh_until) <= props.now;
  return (
    <div class="binding-proof" data-state={expired ? "lapsed" : v.state}>
      {v.state === "verified" && !expired ? (
        <span>
          <strong>Verified</strong> ({METHOD_LABELS[v.method]}), fresh until <Time at={v.fresh_until} />
        </span>
      ) : v.state === "verified" ? (
        <span>
          <strong>Lapsed</strong>: the proof ran out at <Time at={v.fresh_until} />
        </span>
      ) : v.state === "lapsed" ? (
        <span>
          <strong>Lapsed</strong>: {v.reason} (since <Time at={v.lapsed_at} />)
        </span>
      ) : (
        <span>
          <strong>Claimed</strong>: control not proven yet
        </span>
      )}
      {check ? (
        <span class="hint">
          {" "}
          · last check <Time at={check.at} />: {check.result}
        </span>
      ) : null}
      <RecentChecks binding={props.binding} />
    </div>
  );
}

const OUTCOME_LABELS = {
  verified: "verified",
  unreachable: "unreachable, kept",
  mismatch: "not proven",
  expired: "proof ran out",
  error: "check failed, retried",
} as const;

/** The binding's last checks with their reasons, and when the scheduled re-check takes it next. */
function RecentChecks(props: { binding: Binding }) {
  const { checks, next_check_at: next } = props.binding;
  if (checks.length === 0 && !next) return null;
  return (
    <details class="recent-checks">
      <summary class="hint">
        Recent checks ({checks.length})
        {next ? (
          <>
            {" "}
            · next <Time at={next} />
          </>
        ) : null}
      </summary>
      <ol>
        {checks.map((c) => (
          <li data-outcome={c.outcome}>
            <Time at={c.at} /> <strong>{OUTCOME_LABELS[c.outcome]}</strong>
            {c.reason ? <>: {c.reason}</> : null}
          </li>
        ))}
      </ol>
    </details>
  );
}

/** Where a package's back-reference goes: a package.json member (npm) or a README line (PyPI). */
function PackageMetadata(props: { instruction: { url: string; field: string; value: string } }) {
  const { url, field, value } = props.instruction;
  if (field === "description") {
    return (
      <p>
        Publish a release whose README (the project description) has this line of its own, as <code>{url}</code> serves
        it: <code>{value}</code>. To keep it out of the rendered page, write it as an HTML comment:{" "}
        <code>{`<!-- ${value} -->`}</code>.
      </p>
    );
  }
  return (
    <>
      <p>
        Publish a version whose <code>package.json</code> has a <code>{field}</code> member naming this passport, as{" "}
        <code>{url}</code> serves it:
      </p>
      <pre class="instructions">{JSON.stringify({ [field]: value }, null, 2)}</pre>
    </>
  );
}

/** Exactly what to publish so the binding can be verified, from the check's answer. */
function Instructions(props: { check: CheckShown }) {
  const { reason, instructions } = props.check;
  return (
    <div class="check-outcome" role="status">
      <p>
        <strong>Not proven:</strong> {reason}
      </p>
      {instructions.well_known ? (
        <>
          <p>
            Publish this JSON at <code>{instructions.well_known.url}</code> (content type <code>application/json</code>
            ):
          </p>
          <pre class="instructions">{JSON.stringify(instructions.well_known.document, null, 2)}</pre>
        </>
      ) : null}
      {instructions.dns_txt ? (
        <p>
          Or publish a TXT record at <code>{instructions.dns_txt.name}</code> reading{" "}
          <code>{instructions.dns_txt.value}</code>.
        </p>
      ) : null}
      {instructions.document ? (
        <p>
          Make <code>{instructions.document.url}</code> name this passport:{" "}
          {instructions.document.must_name.map((name, i) => (
            <>
              {i > 0 ? " or " : ""}
              <code>{name}</code>
            </>
          ))}
          .
        </p>
      ) : null}
      {instructions.key_directory ? (
        <>
          <p>
            Serve a key directory at <code>{instructions.key_directory.url}</code> (content type{" "}
            <code>{instructions.key_directory.content_type}</code>): a JWK Set of public keys only, with a{" "}
            <code>passport</code> member naming this passport:
          </p>
          <pre class="instructions">{JSON.stringify(instructions.key_directory.document, null, 2)}</pre>
        </>
      ) : null}
      {instructions.package_metadata ? <PackageMetadata instruction={instructions.package_metadata} /> : null}
      {instructions.unprovable ? <p>{instructions.unprovable}</p> : null}
      <p class="hint">Then verify again.</p>
    </div>
  );
}

/** "Verify now": runs the binding's check and shows what to publish when it does not prove control. */
export function VerifyNow(props: { identityId: string; binding: Binding; csrf: string; check?: CheckShown }) {
  const { binding, check } = props;
  return (
    <div>
      <form
        method="post"
        action={`/dashboard/passports/${props.identityId}/bindings/${binding.id}/verify`}
        class="inline-form"
        id={`binding-verify-${binding.id}`}
      >
        <input type="hidden" name="csrf" value={props.csrf} />
        <button type="submit" class="small" aria-label={`Verify binding ${binding.value} now`}>
          Verify now
        </button>
      </form>
      {check?.binding_id === binding.id ? <Instructions check={check} /> : null}
    </div>
  );
}
