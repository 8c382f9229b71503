import { BINDING_CLASSES } from "@passport/domain";
import type { Context } from "hono";
import type { z } from "zod";
import { type Role, roleAtLeast } from "../access/roles.ts";
import type { DeclarersPage, HistoryEvent, PassportSummary, PassportView } from "../api/views.ts";
import type { RecheckView } from "../binding-checks/index.ts";
import { BindingProof, type CheckShown, VerifyNow } from "./binding-proof.tsx";
import type { UiEnv } from "./context.ts";
import { evidenceFreshness } from "./freshness.ts";
import { BINDING_LABELS, historyLabel, historySummary } from "./labels.ts";
import { formatTime, Layout, ProblemMessage, Time } from "./layout.tsx";
import { OrganisationName } from "./organisation-list.tsx";
import { DetailsForm } from "./passport-details-form.tsx";
import {
  AddAuthorityForm,
  AuthorityControls,
  authorityExpired,
  authorityTime,
  grantorText,
  scopeText,
} from "./passport-forms/authority.tsx";
import { AddBindingForm, BindingControls } from "./passport-forms/bindings.tsx";
import { AddEvidenceForm, WithdrawEvidenceForm } from "./passport-forms/evidence.tsx";
import { DuplicateForm, LifecycleForm, RecheckForm, StateContextForm } from "./passport-forms/lifecycle.tsx";
import { TransferForm } from "./passport-forms/organisation.tsx";
import type { Failure, FormContext } from "./passport-forms/parts.tsx";
import { DeclarersSection, UsesSection } from "./passport-forms/uses.tsx";
import type { OrganisationItem } from "./passport-list.tsx";
import { ShareSection } from "./share-section.tsx";

type History = z.infer<typeof HistoryEvent>;
type Summary = z.infer<typeof PassportSummary>;
/** How many possible survivors "Mark as a duplicate" suggests; any other id can still be typed. */
const DUPLICATE_SUGGESTIONS = 50;

/** Messages after a successful form, keyed by the `done` query parameter of the redirect. */
const DONE_MESSAGES: Record<string, string> = {
  "binding-added": "Binding added.",
  "binding-replaced": "Binding updated.",
  "binding-removed": "Binding removed.",
  "binding-context": "Binding environment and version saved.",
  "binding-verified": "Binding verified.",
  "evidence-added": "Evidence added.",
  "evidence-withdrawn": "Evidence withdrawn.",
  lifecycle: "Lifecycle changed.",
  state: "State saved.",
  recheck: "Re-check requested: the next scheduler run, within a minute, sends the pending bindings to be checked.",
  created: "Passport created.",
  "authority-added": "Authority added.",
  "authority-expired": "Authority context expired.",
  "authority-removed": "Authority context removed.",
  transferred: "Responsibility moved.",
  details: "Name and organisations saved.",
  duplicate: "Marked as a duplicate and retired.",
  "uses-declared": "Use declared.",
  "uses-removed": "Use no longer declared.",
};

/** Which role each form needs; a refused post from someone not shown the form gets its message at the top. */
const FORM_ROLES: [prefix: string, role: Role][] = [
  ["lifecycle", "admin"],
  ["duplicate", "admin"],
  ["transfer", "owner"],
];

function ResolverLinks(props: { base: string; id: string }) {
  return (
    <ul>
      <li>
        <a href={`${props.base}/p/${props.id}`}>Resolver proof page</a> (what anyone sees)
      </li>
      <li>
        <a href={`${props.base}/api/p/${props.id}.json`}>Machine-readable record (JSON)</a>
      </li>
    </ul>
  );
}

export async function passportPage(c: Context<UiEnv>, id: string, failure?: Failure, check?: CheckShown) {
  const api = c.get("api");
  const viewer = c.get("viewer");
  const [found, history, organisations, declarers] = await Promise.all([
    api.call<PassportView>(`/v1/passports/${encodeURIComponent(id)}`),
    api.call<{ items: History[] }>(`/v1/passports/${encodeURIComponent(id)}/history?limit=500`),
    api.call<{ items: OrganisationItem[] }>("/v1/organisations"),
    api.call<z.infer<typeof DeclarersPage>>(`/v1/passports/${encodeURIComponent(id)}/declared-by?limit=50`),
  ]);
  if (!found.ok) {
    return c.html(
      <Layout title="Passport not found" viewer={viewer}>
        <h1>Passport not shown</h1>
        <ProblemMessage problem={found.problem} />
        <p>
          Check the identity id you copied; an id outside your organisations looks exactly like one that does not exist.{" "}
          <a href="/dashboard/passports">Back to passports</a>
        </p>
      </Layout>,
      found.problem.status as 404,
    );
  }
  const passport = found.body;
  const role = organisations.ok
    ? organisations.body.items.find((o) => o.id === passport.organisation.id)?.role
    : undefined;
  const memberOf = new Set((organisations.ok ? organisations.body.items : []).map((o) => o.id));
  const retired = passport.state.lifecycle === "retired";
  const canEdit = !retired && roleAtLeast(role, "editor");
  const canAdmin = !retired && roleAtLeast(role, "admin");
  // A refused post from someone who is not shown that form (a viewer's forged post) gets its
  // message at the top, since there is no form to put it beside.
  const needed = FORM_ROLES.find(([prefix]) => failure?.form === prefix)?.[1] ?? "editor";
  const failedFormShown = failure !== undefined && !retired && roleAtLeast(role, needed);
  const isOwner = !retired && role === "owner";
  // Organisations the viewer may name as a separate operator: editor or above, not this one.
  const operatorChoices = (organisations.ok ? organisations.body.items : []).filter(
    (o) => roleAtLeast(o.role, "editor") && o.id !== passport.organisation.id,
  );
  const transferTargets = (organisations.ok ? organisations.body.items : []).filter(
    (o) => o.role === "owner" && o.id !== passport.organisation.id,
  );
  const now = Date.now();
  // Suggestions for "Mark as a duplicate": active passports of the same family in this organisation.
  const candidates = canAdmin
    ? await api.call<{ items: Summary[] }>(
        `/v1/passports?${new URLSearchParams({
          organisation_id: passport.organisation.id,
          family: passport.family,
          lifecycle: "active",
          limit: String(DUPLICATE_SUGGESTIONS),
        })}`,
      )
    : undefined;
  // What the re-evaluation after a reactivation still waits for (docs/lifecycle.md#re-evaluation).
  const recheck = passport.state.recheck_required
    ? await api.call<z.infer<typeof RecheckView>>(`/v1/passports/${encodeURIComponent(id)}/recheck`)
    : undefined;
  const survivors = (candidates?.ok ? candidates.body.items : []).filter((p) => p.identity_id !== passport.identity_id);
  const ctx: FormContext = { passport, csrf: viewer.csrf, failure };
  const resolverBase = c.env.RESOLVER_BASE_URL;
  const done = DONE_MESSAGES[c.req.query("done") ?? ""];
  const { state } = passport;
  const events = history.ok ? [...history.body.items].reverse() : [];
  const classes = BINDING_CLASSES.filter((cls) => passport.bindings.some((b) => b.class === cls));

  return c.html(
    <Layout title={passport.display_name ?? passport.identity_id} viewer={viewer}>
      <p>
        <a href="/dashboard/passports">← All passports</a>
      </p>
      <h1>{passport.display_name ?? "Unnamed passport"}</h1>
      {done ? (
        <div class="notice" role="status">
          {done}{" "}
          {passport.publication.status === "published"
            ? `Saved and published as record version ${passport.record_version} (signed and written). Resolvers in every location serve it within about a minute, at the latest within 2 minutes; browsers may show the previous version 15 seconds longer.`
            : `Saved as record version ${passport.record_version}. Publication to the resolver is delayed and retried automatically${
                passport.publication.next_attempt_at && Date.parse(passport.publication.next_attempt_at) > Date.now()
                  ? ` at ${formatTime(passport.publication.next_attempt_at)}`
                  : " within a minute"
              }; until then the resolver serves the previous version.`}{" "}
          <a href={passport.publication.status_url}>Check the current state now</a> (a signed status token from the
          resolver).
        </div>
      ) : null}
      {failure && !failedFormShown ? <ProblemMessage problem={failure.problem} id={`${failure.form}-problem`} /> : null}
      {failure && failedFormShown ? (
        <p class="problem" role="alert">
          <strong>The change was not made.</strong> See the message beside the form below.{" "}
          <a href={`#${failure.form}-problem`}>Go to the message</a>
        </p>
      ) : null}
      <section class="panel" aria-labelledby="identity-heading">
        <h2 id="identity-heading" class="sr-only">
          Identity
        </h2>
        <dl class="facts">
          <dt>Identity id</dt>
          <dd>
            <code id="identity-id">{passport.identity_id}</code>{" "}
            <button type="button" class="secondary small" data-copy="identity-id" hidden>
              Copy id
            </button>
          </dd>
          <dt>Family</dt>
          <dd>{passport.family === "api" ? "API passport" : "Agent passport"}</dd>
          <dt>Organisation</dt>
          <dd id="passport-organisation">
            <OrganisationName organisation={passport.organisation} memberOf={memberOf} />{" "}
            <span class="hint">({passport.organisation.relationship})</span> <code>{passport.organisation.id}</code>
          </dd>
          {passport.operator ? (
            <>
              <dt>Operated by</dt>
              <dd id="passport-operator">
                <OrganisationName organisation={passport.operator} memberOf={memberOf} />{" "}
                <code>{passport.operator.id}</code>
              </dd>
            </>
          ) : null}
          <dt>Parent</dt>
          <dd id="passport-parent">
            {passport.organisation.parent ? (
              <OrganisationName organisation={passport.organisation.parent} memberOf={memberOf} />
            ) : (
              "None"
            )}
          </dd>
          <dt>Your role</dt>
          <dd>{role ?? "none"}</dd>
          <dt>Record version</dt>
          <dd>
            {passport.record_version} (updated <Time at={passport.updated_at} />)
          </dd>
        </dl>
        {canEdit ? <DetailsForm ctx={ctx} operators={operatorChoices} /> : null}
        <h3>In the resolver</h3>
        <ResolverLinks base={resolverBase} id={passport.identity_id} />
        <ShareSection passport={passport} resolverBase={resolverBase} />
      </section>

      <section aria-labelledby="state-heading">
        <h2 id="state-heading">State</h2>
        <dl class="facts">
          <dt>Lifecycle</dt>
          <dd>
            <span class={`badge s-${state.lifecycle}`} id="lifecycle-status">
              {state.lifecycle}
            </span>
          </dd>
          <dt>As of</dt>
          <dd>
            <Time at={state.as_of} />
          </dd>
          <dt>Availability</dt>
          <dd>{state.availability ?? "not stated"}</dd>
          <dt>Environment</dt>
          <dd>{state.environment ?? "not stated"}</dd>
          <dt>Version</dt>
          <dd>{state.version ?? "not stated"}</dd>
          {passport.family === "agent" ? (
            <>
              <dt>Model</dt>
              <dd id="model">
                {state.model
                  ? [state.model.provider, state.model.name, state.model.version].filter(Boolean).join(" · ")
                  : "not stated"}
              </dd>
            </>
          ) : null}
          {state.duplicate_of ? (
            <>
              <dt>Duplicate of</dt>
              <dd>
                <a href={`/dashboard/passports/${state.duplicate_of}`}>{state.duplicate_of}</a>
              </dd>
            </>
          ) : null}
        </dl>
        {state.recheck_required ? (
          <div class="panel" role="note" id="recheck-pending">
            <p>
              <strong>Re-check pending.</strong> This passport was reactivated or materially changed (its responsible
              organisation, relationship or operator): consumers are told to re-evaluate it until every binding checked
              before has passed a new check and the evidence was renewed. The service re-checks the bindings by itself
              and clears this flag when they pass; a host that does not answer keeps it pending.
            </p>
            {recheck?.ok ? <RecheckPending pending={recheck.body.pending} /> : null}
            {canEdit ? <RecheckForm ctx={ctx} /> : null}
          </div>
        ) : null}
        {retired ? <p>Retired passports are kept exactly as they were; nothing about them can change.</p> : null}
        {canAdmin ? <LifecycleForm ctx={ctx} /> : null}
        {canEdit ? <StateContextForm ctx={ctx} /> : null}
      </section>

      <section aria-labelledby="bindings-heading">
        <h2 id="bindings-heading">Bindings</h2>
        {classes.length === 0 ? <p>No bindings. What is absent is treated as absent.</p> : null}
        {classes.map((cls) => (
          <>
            <h3>{BINDING_LABELS[cls]}</h3>
            <ul class="bindings">
              {passport.bindings
                .filter((b) => b.class === cls)
                .map((b) => (
                  <li>
                    <code>{b.value}</code>
                    {b.label ? <span class="hint"> · {b.label}</span> : null}
                    {b.environment || b.version ? (
                      <span class="hint binding-context">
                        {" "}
                        · {[b.environment, b.version ? `version ${b.version}` : null].filter(Boolean).join(", ")}
                      </span>
                    ) : null}
                    <span class="hint">
                      {" "}
                      · bound <Time at={b.bound_at} />
                    </span>
                    <BindingProof binding={b} now={Date.now()} />
                    {b.keys ? (
                      <ul class="hint" aria-label="Public keys seen at the last check">
                        {b.keys.map((k) => (
                          <li>
                            key <code>{k.thumbprint}</code>
                            {k.kid && k.kid !== k.thumbprint ? ` (kid ${k.kid})` : ""}
                            {k.alg ? ` · ${k.alg}` : ""}
                          </li>
                        ))}
                      </ul>
                    ) : null}
                    {canEdit ? (
                      <VerifyNow identityId={passport.identity_id} binding={b} csrf={viewer.csrf} check={check} />
                    ) : null}
                    {canEdit ? <BindingControls ctx={ctx} binding={b} /> : null}
                  </li>
                ))}
            </ul>
          </>
        ))}
        {canEdit ? <AddBindingForm ctx={ctx} /> : null}
      </section>

      {passport.family === "agent" ? <UsesSection ctx={ctx} canEdit={canEdit} /> : null}
      {declarers.ok && (passport.family === "api" || declarers.body.declared_by > 0) ? (
        <DeclarersSection declarers={declarers.body} />
      ) : null}

      <section aria-labelledby="evidence-heading">
        <h2 id="evidence-heading">Evidence</h2>
        {passport.evidence.length === 0 ? (
          <p>No evidence. A claim without relevant evidence is not established.</p>
        ) : (
          <div class="table-wrap">
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">Claim</th>
                  <th scope="col">Source</th>
                  <th scope="col">Scope</th>
                  <th scope="col">Observed</th>
                  <th scope="col">Fresh until</th>
                  <th scope="col">Freshness</th>
                  {canEdit ? <th scope="col">Action</th> : null}
                </tr>
              </thead>
              <tbody>
                {passport.evidence.map((e) => {
                  const freshness = evidenceFreshness(e);
                  return (
                    <tr>
                      <td data-label="Claim">{e.reference ? <a href={e.reference}>{e.claim}</a> : e.claim}</td>
                      <td data-label="Source">{e.source}</td>
                      <td data-label="Scope">{e.scope}</td>
                      <td data-label="Observed">
                        <Time at={e.observed_at} />
                      </td>
                      <td data-label="Fresh until">
                        {e.fresh_until ? <Time at={e.fresh_until} /> : "no expiry stated"}
                      </td>
                      <td data-label="Freshness">
                        <span class={`badge f-${freshness}`}>{freshness}</span>
                      </td>
                      {canEdit ? (
                        <td data-label="Action">
                          <WithdrawEvidenceForm ctx={ctx} evidenceId={e.id} claim={e.claim} />
                        </td>
                      ) : null}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        {canEdit ? <AddEvidenceForm ctx={ctx} /> : null}
      </section>

      <section aria-labelledby="authority-heading">
        <h2 id="authority-heading">Authority</h2>
        {passport.authority.length === 0 ? (
          <p>None. Identity is never blanket permission; authority is evaluated per action.</p>
        ) : (
          <ul class="bindings" id="authority-list">
            {passport.authority.map((a) => (
              <li>
                <strong>{a.action}</strong>
                {a.context ? `: ${a.context}` : null}
                {scopeText(a) ? <span> · {scopeText(a)}</span> : null}
                {grantorText(a, passport) ? <span class="hint"> · granted by {grantorText(a, passport)}</span> : null}{" "}
                <span class="badge">
                  {typeof a.granted_by === "object" && a.granted_by ? "checked grant" : "free text, not established"}
                </span>{" "}
                <span class={authorityExpired(a, now) ? "badge s-revoked" : "badge"}>{authorityTime(a, now)}</span>
                {canEdit ? <AuthorityControls ctx={ctx} entry={a} now={now} /> : null}
              </li>
            ))}
          </ul>
        )}
        {canEdit ? <AddAuthorityForm ctx={ctx} grantsAsOrganisation={canAdmin} /> : null}
      </section>

      {canAdmin ? (
        <section aria-labelledby="responsibility-heading" id="responsibility">
          <h2 id="responsibility-heading">Responsibility and duplicates</h2>
          {isOwner ? (
            <TransferForm ctx={ctx} targets={transferTargets} />
          ) : (
            <p class="hint">
              Moving responsibility to another organisation needs the owner role here and in the receiving organisation.
            </p>
          )}
          <DuplicateForm ctx={ctx} suggestions={survivors} />
        </section>
      ) : null}

      <section aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        {history.ok ? (
          <ol class="timeline" reversed>
            {events.map((event) => (
              <li>
                <strong>{historyLabel(event.kind)}</strong> <span class="hint">v{event.record_version}</span>
                <br />
                <Time at={event.at} /> <span class="hint">by {event.actor}</span>
                {historySummary(event.detail) ? <div>{historySummary(event.detail)}</div> : null}
              </li>
            ))}
          </ol>
        ) : (
          <ProblemMessage problem={history.problem} />
        )}
      </section>
    </Layout>,
    failure ? (failure.problem.status as 400) : 200,
  );
}

/** The bindings and claims a re-evaluation waits for, as the Dashboard shows them. */
function RecheckPending(props: { pending: z.infer<typeof RecheckView>["pending"] }) {
  const { bindings, claims } = props.pending;
  if (bindings.length === 0 && claims.length === 0) {
    return <p>Nothing is pending any more: the flag clears within a minute.</p>;
  }
  return (
    <>
      {bindings.length > 0 ? (
        <>
          <h3>Bindings awaiting a passing check</h3>
          <ul id="recheck-bindings">
            {bindings.map((b) => (
              <li>
                <code>{b.value}</code>{" "}
                <span class="hint">({BINDING_LABELS[b.class as keyof typeof BINDING_LABELS] ?? b.class})</span>
                {" · "}
                {b.verification_state === "lapsed"
                  ? `failed: ${b.last_check_result ?? "the proof no longer holds"}. Publish the proof again, or remove the binding.`
                  : b.last_checked_at && b.last_check_result && !b.last_check_result.startsWith("verified")
                    ? `not answered yet (${b.last_check_result}); tried again${b.next_check_at ? ` at ${formatTime(b.next_check_at)}` : ""}.`
                    : `check due${b.next_check_at ? ` at ${formatTime(b.next_check_at)}` : ""}.`}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {claims.length > 0 ? (
        <>
          <h3>Claims awaiting fresh evidence</h3>
          <p class="hint">
            Their evidence is from before the reactivation. A passing check renews the service's own observations; add
            new evidence (attested where it must count) for the others.
          </p>
          <ul id="recheck-claims">
            {claims.map((claim) => (
              <li>
                <code>{claim}</code>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}
