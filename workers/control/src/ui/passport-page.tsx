import { BINDING_CLASSES } from "@passport/domain";
import type { Context } from "hono";
import type { Child } from "hono/jsx";
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

  // The outcome of a change is shown in the section it changed, which opens; a failed form's
  // section opens with the form and its message beside it.
  const doneKey = c.req.query("done") ?? "";
  const doneIn = done ? sectionOfDone(doneKey) : undefined;
  const failedIn = failure && failedFormShown ? sectionOfForm(failure.form) : undefined;
  const opens = (section: SectionId) =>
    doneIn === section || failedIn === section || (section === "bindings" && !!check);
  const doneNotice = (section: SectionId | "overview") =>
    done && doneIn === section ? <DoneNotice message={done} passport={passport} /> : null;
  const verified = passport.bindings.filter((b) => b.verification.state === "verified").length;
  const familyName = passport.family === "api" ? "API passport" : "Agent passport";
  const usesShown = passport.family === "agent";
  const declarersShown = declarers.ok && (passport.family === "api" || declarers.body.declared_by > 0);
  // The section navigation: one line of links, each with how many things the section holds.
  const sections: [SectionId, string, number | undefined][] = [
    ["bindings", "Bindings", passport.bindings.length],
    ...(usesShown || declarersShown ? [["uses", "Uses", undefined] as [SectionId, string, undefined]] : []),
    ["evidence", "Evidence", passport.evidence.length],
    ["authority", "Authority", passport.authority.length],
    ["history", "History", events.length],
    ["settings", "Settings", undefined],
  ];

  return c.html(
    <Layout title={passport.display_name ?? passport.identity_id} viewer={viewer}>
      <p class="crumbs">
        <a href="/dashboard/passports">← All passports</a>
      </p>
      <section class="passport-head" aria-labelledby="passport-name">
        <div class="title-row">
          <h1 id="passport-name">{passport.display_name ?? "Unnamed passport"}</h1>
          <span class={`badge state s-${state.lifecycle}`} id="lifecycle-status">
            {state.lifecycle}
          </span>
        </div>
        <p class="id-row">
          <span class="sr-only">Identity id </span>
          <code id="identity-id" class="identity-id">
            {passport.identity_id}
          </code>{" "}
          <button type="button" class="secondary small" data-copy="identity-id" hidden>
            Copy id
          </button>
        </p>
        {doneNotice("overview")}
        {failure && !failedFormShown ? (
          <ProblemMessage problem={failure.problem} id={`${failure.form}-problem`} />
        ) : null}
        {failure && failedFormShown ? (
          <p class="problem" role="alert">
            <strong>The change was not made.</strong> See the message beside the form below.{" "}
            <a href={`#${failure.form}-problem`}>Go to the message</a>
          </p>
        ) : null}
        <dl class="facts overview">
          <div>
            <dt>Family</dt>
            <dd>{familyName}</dd>
          </div>
          <div class="wide">
            <dt>Organisation</dt>
            <dd id="passport-organisation">
              <OrganisationName organisation={passport.organisation} memberOf={memberOf} />{" "}
              <span class="hint">
                ({passport.organisation.relationship}) <code>{passport.organisation.id}</code>
              </span>
            </dd>
          </div>
          {passport.operator ? (
            <div class="wide">
              <dt>Operated by</dt>
              <dd id="passport-operator">
                <OrganisationName organisation={passport.operator} memberOf={memberOf} />{" "}
                <code>{passport.operator.id}</code>
              </dd>
            </div>
          ) : null}
          <div class="wide">
            <dt>Parent</dt>
            <dd id="passport-parent">
              {passport.organisation.parent ? (
                <OrganisationName organisation={passport.organisation.parent} memberOf={memberOf} />
              ) : (
                "None"
              )}
            </dd>
          </div>
          <div class="wide">
            <dt>Proof</dt>
            <dd id="proof-status">
              {passport.publication.status === "published" ? "Published" : "Publication pending"}, record version{" "}
              {passport.record_version} (updated <Time at={passport.updated_at} />) ·{" "}
              <a href={`${resolverBase}/p/${passport.identity_id}`}>Resolver proof page</a> ·{" "}
              <a href={`${resolverBase}/api/p/${passport.identity_id}.json`}>JSON</a>
            </dd>
          </div>
          <div>
            <dt>Bindings</dt>
            <dd>
              {passport.bindings.length} bound, {verified} verified
            </dd>
          </div>
          <div>
            <dt>Environment and version</dt>
            <dd>
              {state.environment ?? "not stated"}, {state.version ? `version ${state.version}` : "no version stated"}
            </dd>
          </div>
          {passport.family === "agent" ? (
            <div>
              <dt>Model</dt>
              <dd id="model">
                {state.model
                  ? [state.model.provider, state.model.name, state.model.version].filter(Boolean).join(" · ")
                  : "not stated"}
              </dd>
            </div>
          ) : null}
          <div>
            <dt>Availability</dt>
            <dd>{state.availability ?? "not stated"}</dd>
          </div>
          <div>
            <dt>State as of</dt>
            <dd>
              <Time at={state.as_of} />
            </dd>
          </div>
          <div>
            <dt>Your role</dt>
            <dd>{role ?? "none"}</dd>
          </div>
          {state.duplicate_of ? (
            <div class="wide">
              <dt>Duplicate of</dt>
              <dd>
                <a href={`/dashboard/passports/${state.duplicate_of}`}>{state.duplicate_of}</a>
              </dd>
            </div>
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
      </section>

      <nav class="section-nav" aria-label="Passport sections">
        {sections.map(([section, title, count]) => (
          <a href={`#${section}`}>
            {title}
            {count === undefined ? null : <span class="count"> {count}</span>}
          </a>
        ))}
      </nav>

      <Section
        id="bindings"
        title="Bindings"
        summary={`${passport.bindings.length} bound, ${verified} verified`}
        open={opens("bindings")}
      >
        {doneNotice("bindings")}
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
        {canEdit ? (
          <Disclosure summary="Add a binding" open={failure?.form === "binding-add"}>
            <AddBindingForm ctx={ctx} />
          </Disclosure>
        ) : null}
      </Section>

      {usesShown || declarersShown ? (
        <Section id="uses" title="Uses" summary={usesCount(passport, declarers)} open={opens("uses")}>
          {doneNotice("uses")}
          {usesShown ? <UsesSection ctx={ctx} canEdit={canEdit} /> : null}
          {declarers.ok && declarersShown ? <DeclarersSection declarers={declarers.body} /> : null}
        </Section>
      ) : null}

      <Section
        id="evidence"
        title="Evidence"
        summary={counted(passport.evidence.length, "item", "items")}
        open={opens("evidence")}
      >
        {doneNotice("evidence")}
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
        {canEdit ? (
          <Disclosure summary="Add an evidence item" open={failure?.form === "evidence-add"}>
            <AddEvidenceForm ctx={ctx} />
          </Disclosure>
        ) : null}
      </Section>

      <Section
        id="authority"
        title="Authority"
        summary={counted(passport.authority.length, "entry", "entries")}
        open={opens("authority")}
      >
        {doneNotice("authority")}
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
        {canEdit ? (
          <Disclosure summary="Add an authority entry" open={failure?.form === "authority-add"}>
            <AddAuthorityForm ctx={ctx} grantsAsOrganisation={canAdmin} />
          </Disclosure>
        ) : null}
      </Section>

      <Section id="history" title="History" summary={counted(events.length, "event", "events")} open={opens("history")}>
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
      </Section>

      <Section
        id="settings"
        title="Settings and sharing"
        summary={canEdit ? "name, organisations, environment, sharing" : "sharing"}
        open={opens("settings")}
      >
        {doneNotice("settings")}
        {canEdit ? (
          <Disclosure summary="Edit name and organisations" open={failure?.form === "details"}>
            <DetailsForm ctx={ctx} operators={operatorChoices} />
          </Disclosure>
        ) : null}
        {canEdit ? (
          <Disclosure summary="Edit environment, version and availability" open={failure?.form === "state"}>
            <StateContextForm ctx={ctx} />
          </Disclosure>
        ) : null}
        <ShareSection passport={passport} resolverBase={resolverBase} />
        {canAdmin ? (
          <section aria-labelledby="responsibility-heading" id="responsibility">
            <h3 id="responsibility-heading">Responsibility and duplicates</h3>
            {isOwner ? (
              <Disclosure summary="Change the responsible organisation" open={failure?.form === "transfer"}>
                <TransferForm ctx={ctx} targets={transferTargets} />
              </Disclosure>
            ) : (
              <p class="hint">
                Moving responsibility to another organisation needs the owner role here and in the receiving
                organisation.
              </p>
            )}
            <Disclosure summary="Mark as a duplicate" open={failure?.form === "duplicate"}>
              <DuplicateForm ctx={ctx} suggestions={survivors} />
            </Disclosure>
          </section>
        ) : null}
      </Section>
    </Layout>,
    failure ? (failure.problem.status as 400) : 200,
  );
}

type SectionId = "bindings" | "uses" | "evidence" | "authority" | "history" | "settings";

/** Where the outcome of a change is shown: in the section that holds what it changed. */
function sectionOfDone(done: string): SectionId | "overview" {
  if (done.startsWith("binding-")) return "bindings";
  if (done.startsWith("evidence-")) return "evidence";
  if (done.startsWith("authority-")) return "authority";
  if (done.startsWith("uses-")) return "uses";
  if (done === "details" || done === "state") return "settings";
  return "overview";
}

/** The section that holds a form, so it opens when that form failed. */
function sectionOfForm(form: string): SectionId | undefined {
  if (form.startsWith("binding") || form.startsWith("verify")) return "bindings";
  if (form.startsWith("evidence")) return "evidence";
  if (form.startsWith("authority")) return "authority";
  if (form.startsWith("uses")) return "uses";
  if (["details", "state", "transfer", "duplicate"].includes(form)) return "settings";
  return undefined;
}

/** The path the Dashboard returns to after a change: the passport, at the section the change is shown in. */
export function passportDonePath(id: string, done: string): string {
  const section = sectionOfDone(done);
  return `/dashboard/passports/${id}?done=${done}${section === "overview" ? "" : `#${section}`}`;
}

/** "1 item", "2 items". */
function counted(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function usesCount(passport: PassportView, declarers: { ok: boolean; body?: unknown }): string {
  const declaredBy = declarers.ok ? (declarers.body as z.infer<typeof DeclarersPage>).declared_by : 0;
  return passport.family === "agent"
    ? `uses ${counted(passport.uses.length, "passport", "passports")}`
    : `${counted(declaredBy, "agent declares", "agents declare")} it`;
}

/**
 * One part of the passport page a person opens: a disclosure with its heading as the summary, so it
 * works without script (the section navigation's links open it: browsers open a closed disclosure
 * that holds the link's target). Its body carries the section's id.
 */
function Section(props: { id: SectionId; title: string; summary: string; open: boolean; children: Child }) {
  return (
    <section class="fold" aria-labelledby={`${props.id}-heading`}>
      <details open={props.open}>
        <summary>
          <h2 id={`${props.id}-heading`}>{props.title}</h2> <span class="hint">{props.summary}</span>
        </summary>
        <div class="fold-body" id={props.id}>
          {props.children}
        </div>
      </details>
    </section>
  );
}

/** A form behind its "Add ..." or "Edit ..." summary, open when it failed so its message shows beside it. */
function Disclosure(props: { summary: string; open: boolean; children: Child }) {
  return (
    <details class="disclosure" open={props.open}>
      <summary>{props.summary}</summary>
      {props.children}
    </details>
  );
}

/** What a change did, where it did it: saved, and when the resolver serves it. */
function DoneNotice(props: { message: string; passport: PassportView }) {
  const { message, passport } = props;
  return (
    <div class="notice" role="status">
      {message}{" "}
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
