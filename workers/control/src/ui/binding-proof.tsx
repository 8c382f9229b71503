import type { PassportView } from "../api/views.ts";
import { Time } from "./layout.tsx";

type Binding = PassportView["bindings"][number];

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
    </div>
  );
}
