import {
  BINDING_CLASS_LABELS as BINDING_LABELS,
  type BindingVerification,
  internationalHost,
  type LifecycleStatus,
  type PassportRecord,
  type PublicEvidence,
  type VerificationMethod,
} from "@passport/domain";
import { Layout } from "./layout.tsx";

// Consumer guidance of spec 3, shown beside the state it applies to.
const LIFECYCLE_GUIDANCE: Record<LifecycleStatus, string> = {
  active: "Active. Operate per the published state and your policy; re-check before higher-consequence actions.",
  suspended: "Suspended. Re-check, and challenge or deny per your policy.",
  revoked: "Revoked. Re-check, and challenge or deny per your policy.",
  retired: "Retired. The identity and its history are preserved; it is never reused for anything else.",
};

/**
 * Only web addresses become links; any other value is shown as text. The link shows the ASCII
 * form the service stored and checked; an internationalised host is also shown as it reads in
 * Unicode, so a reader sees both (docs/canonical-urls.md).
 */
function Value(props: { value: string }) {
  if (!/^https?:\/\//i.test(props.value)) return <span class="id">{props.value}</span>;
  const readable = internationalHost(props.value);
  return (
    <>
      <a href={props.value} rel="nofollow noopener noreferrer">
        {props.value}
      </a>
      {readable ? <div class="muted">internationalised host, reads as {readable}</div> : null}
    </>
  );
}

function Time(props: { value: string }) {
  return <time datetime={props.value}>{props.value.replace("T", " ").replace(/(\.\d+)?Z$/, " UTC")}</time>;
}

function Freshness(props: { evidence: PublicEvidence; now: number }) {
  const { fresh_until: freshUntil } = props.evidence;
  if (!freshUntil) return <span class="muted">no stated limit; judge by when it was observed</span>;
  const expired = Date.parse(freshUntil) <= props.now;
  return (
    <span class={expired ? "expired" : undefined}>
      {expired ? "expired " : "fresh until "}
      <Time value={freshUntil} />
    </span>
  );
}

const METHOD_LABELS: Record<VerificationMethod, string> = {
  http_well_known: "well-known document on the bound origin",
  dns_txt: "DNS TXT record",
  document_names_id: "the bound document names this identity",
  provider_statement: "the provider's own statement",
};

/**
 * A binding's proof state. A verified binding past its freshness is shown as lapsed, and a record
 * without a state (published before bindings were proven) as claimed: absent proof is not proof.
 */
function Verification(props: { verification: BindingVerification | undefined; now: number }) {
  const v = props.verification ?? { state: "claimed" as const };
  if (v.state === "verified" && Date.parse(v.fresh_until) > props.now) {
    return (
      <span class="verified">
        verified: {METHOD_LABELS[v.method]}
        <div class="muted">
          checked <Time value={v.verified_at} />, fresh until <Time value={v.fresh_until} />
        </div>
      </span>
    );
  }
  if (v.state === "verified") {
    return (
      <span class="expired">
        lapsed: proof expired <Time value={v.fresh_until} />
      </span>
    );
  }
  if (v.state === "lapsed") {
    return (
      <span class="expired">
        lapsed: {v.reason}
        <div class="muted">
          since <Time value={v.lapsed_at} />
        </div>
      </span>
    );
  }
  return <span class="muted">claimed: control not proven</span>;
}

export function PassportPage(props: { record: PassportRecord; jsonUrl: string; now: number }) {
  const { record, now } = props;
  const { organisation, state } = record;
  const family = record.family === "api" ? "API passport" : "Agent passport";
  return (
    <Layout title={`${record.display_name ?? record.identity_id}: ${family}`}>
      <p class="muted">{family}</p>
      <h1>{record.display_name ?? <span class="id">{record.identity_id}</span>}</h1>
      <p>
        Identity id <code>{record.identity_id}</code>. Machine-readable record:{" "}
        <a href={`/api/p/${record.identity_id}.json`}>{props.jsonUrl}</a>
      </p>

      <h2>State</h2>
      <div class={`state state-${state.lifecycle}`}>
        <strong>{LIFECYCLE_GUIDANCE[state.lifecycle]}</strong>
        {state.recheck_required ? (
          <p>Reactivated: bindings and evidence are being re-checked. Do not rely on earlier observations.</p>
        ) : null}
        {state.duplicate_of ? (
          <p>
            Marked as a duplicate of <a href={`/p/${state.duplicate_of}`}>{state.duplicate_of}</a>; the two are not
            equivalent.
          </p>
        ) : null}
      </div>
      <dl>
        <dt>As of</dt>
        <dd>
          <Time value={state.as_of} />
        </dd>
        {state.availability ? (
          <>
            <dt>Availability</dt>
            <dd>{state.availability}</dd>
          </>
        ) : null}
        {state.environment ? (
          <>
            <dt>Environment</dt>
            <dd>{state.environment}</dd>
          </>
        ) : null}
        {state.version ? (
          <>
            <dt>Version</dt>
            <dd>{state.version}</dd>
          </>
        ) : null}
        {state.model ? (
          <>
            <dt>Model (context)</dt>
            <dd id="model">
              {[state.model.provider, state.model.name, state.model.version].filter(Boolean).join(" · ")}
            </dd>
          </>
        ) : null}
      </dl>

      <h2>Organisation</h2>
      <dl>
        <dt>{organisation.relationship === "operator" ? "Operated by" : "Responsible"}</dt>
        <dd>
          {organisation.name} <span class="muted id">({organisation.id})</span>
        </dd>
        {organisation.parent ? (
          <>
            <dt>Parent</dt>
            <dd>
              {organisation.parent.name} <span class="muted id">({organisation.parent.id})</span>
            </dd>
          </>
        ) : null}
        {record.operator ? (
          <>
            <dt>Operated by</dt>
            <dd id="operator">
              {record.operator.name} <span class="muted id">({record.operator.id})</span>
            </dd>
          </>
        ) : null}
      </dl>
      <p class="muted">A claim of responsibility, not proof of every organisational assertion or runtime control.</p>

      <h2>Bindings</h2>
      {record.bindings.length === 0 ? (
        <p class="muted">No bindings are published. Absent bindings are not established.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Class</th>
              <th>Value</th>
              <th>Proof</th>
              <th>Bound</th>
            </tr>
          </thead>
          <tbody>
            {record.bindings.map((binding) => (
              <tr>
                <td data-label="Class">{BINDING_LABELS[binding.class] ?? binding.class}</td>
                <td data-label="Value">
                  <Value value={binding.value} />
                  {binding.label ? <div class="muted">{binding.label}</div> : null}
                  {binding.environment || binding.version ? (
                    <div class="muted">
                      {[binding.environment, binding.version ? `version ${binding.version}` : undefined]
                        .filter(Boolean)
                        .join(", ")}
                    </div>
                  ) : null}
                </td>
                <td data-label="Proof">
                  <Verification verification={binding.verification} now={now} />
                </td>
                <td data-label="Bound">
                  <Time value={binding.bound_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Evidence</h2>
      {record.evidence.length === 0 ? (
        <p class="muted">No evidence is published. A claim without relevant evidence is not established.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Claim</th>
              <th>Source and scope</th>
              <th>Freshness</th>
            </tr>
          </thead>
          <tbody>
            {record.evidence.map((evidence) => (
              <tr>
                <td data-label="Claim">
                  <code>{evidence.claim}</code>
                  {evidence.reference ? (
                    <div>
                      <Value value={evidence.reference} />
                    </div>
                  ) : null}
                </td>
                <td data-label="Source and scope">
                  {evidence.source}
                  <div class="muted">
                    {evidence.basis === "observed"
                      ? "Observed by this service"
                      : evidence.trusted_source && evidence.attested_by
                        ? `Asserted by the organisation; attested by ${evidence.attested_by.source} (key ${evidence.attested_by.key_id}), a source the operator trusts`
                        : "Asserted by the organisation"}
                  </div>
                  <div class="muted">Scope: {evidence.scope}</div>
                </td>
                <td data-label="Freshness">
                  observed <Time value={evidence.observed_at} />
                  <div>
                    <Freshness evidence={evidence} now={now} />
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      {record.authority ? (
        <>
          <h2>Authority context</h2>
          <p class="muted">
            Action-specific and mutable; never blanket permission. Who granted a checked grant was checked by the
            service when it was written; free-text context is not established authority.
          </p>
          <table>
            <thead>
              <tr>
                <th>Action</th>
                <th>Context</th>
                <th>Granted by</th>
                <th>Expires</th>
              </tr>
            </thead>
            <tbody>
              {record.authority.map((entry) => (
                <tr>
                  <td data-label="Action">{entry.action}</td>
                  <td data-label="Context">{[entry.context, authorityScope(entry)].filter(Boolean).join(" · ")}</td>
                  <td data-label="Granted by">{authorityGrantor(entry)}</td>
                  <td data-label="Expires">{entry.expires_at ? <Time value={entry.expires_at} /> : ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}

      <h2>Record</h2>
      <dl>
        <dt>Version</dt>
        <dd>{record.record_version}</dd>
        <dt>Published</dt>
        <dd>
          <Time value={record.published_at} />
        </dd>
        <dt>Digest</dt>
        <dd>
          <code>{record.digest}</code>
        </dd>
      </dl>
      <p class="muted">
        A passport is identity, not authentication or authorization: it grants no permission to call anything. Re-check
        it before a consequential action; this page may be up to a couple of minutes old.
      </p>
    </Layout>
  );
}

type AuthorityEntry = NonNullable<PassportRecord["authority"]>[number];

/** A structured grant's scope and limits in words; nothing for free-text context. */
function authorityScope(entry: AuthorityEntry): string {
  if (!("scope" in entry) || !entry.scope) return "";
  const { resource, limits } = entry.scope;
  return [
    resource ? `on ${resource}` : "",
    limits?.amount ? `up to ${limits.amount.value} ${limits.amount.currency}` : "",
    limits?.rate ? `at most ${limits.rate.count} per ${limits.rate.per}` : "",
  ]
    .filter(Boolean)
    .join(", ");
}

/** Who granted it: the grantor the service checked, or the text typed on free-text context (not checked). */
function authorityGrantor(entry: AuthorityEntry): string {
  const grantor = entry.granted_by;
  if (grantor === undefined) return "";
  if (typeof grantor === "string") return `${grantor} (not checked)`;
  const role = grantor.role ? `, ${grantor.role}` : "";
  if (grantor.kind === "passport") return `passport ${grantor.id} (checked)`;
  return `${grantor.id} (${grantor.relationship} organisation${role}; checked)`;
}

export function HomePage() {
  return (
    <Layout title="Passport resolver">
      <h1>Passport resolver</h1>
      <p>
        Public, read-only proof for API and agent passports. Anyone can re-check a passport here without an account.
      </p>
      <form method="get" action="/p">
        <label>
          Identity id <input name="id" size={34} placeholder="psp_…" required />
        </label>{" "}
        <button type="submit">Look up</button>
      </form>
      <h2>Machine interface</h2>
      <ul>
        <li>
          <code>GET /api/p/{"{identity_id}"}.json</code>: the published record
        </li>
        <li>
          <a href="/schemas/passport-record.json">
            <code>/schemas/passport-record.json</code>
          </a>
          : its JSON Schema
        </li>
      </ul>
    </Layout>
  );
}
