import { PROBLEM_TYPE_BASE, type Problem } from "@passport/domain";
import { type Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { roleAtLeast } from "../access/roles.ts";
import type { PassportView } from "../api/views.ts";
import { STAGE_LABELS, STAGES, type Stage } from "../marketplace/index.ts";
import type { ApiFetch, ApiResult } from "./api.ts";
import type { UiEnv } from "./context.ts";
import { signedIn, signInLocation } from "./guard.tsx";
import { Layout, ProblemMessage, Time } from "./layout.tsx";
import { refuseForgedPost } from "./session.ts";

type UiContext = Context<UiEnv>;

/** What GET /v1/acquisitions/{id} answers (routes/acquisitions.ts). */
interface Acquisition {
  acquisition_id: string;
  status: "received" | "processing" | "completed" | "failed";
  next: "wait" | "claim" | "contact_support";
  created_at: string;
  updated_at: string;
  stages: {
    stage: string;
    label: string;
    status: string;
    attempts: number;
    outcome: string | null;
    error: { code: string; message: string | null } | null;
    at: string;
  }[];
  error: { stage: string; code: string | null; message: string | null; at: string } | null;
  support: SupportDetails | null;
  /** null until the claim for a cloud account seen for the first time: the claimant chooses. */
  account: { organisation_id: string } | null;
  passport: {
    identity_id: string;
    family: string;
    outcome: string | null;
    lifecycle: string | null;
    resolver_url: string;
  } | null;
  checklist: { item: string; label: string; state: "done" | "pending" | "failed" | "confirm" }[];
  claimed: boolean;
  claimed_by_you: boolean;
}

/** What a failed acquisition asks the customer to send to support (routes/acquisitions.ts). */
interface SupportDetails {
  acquisition_id: string;
  stage: string;
  stage_label: string;
  at: string;
  error_code: string | null;
  message: string | null;
  cloud_account: { aws_account_id: string | null; customer_identifier: string | null; product_code: string | null };
}

const ACQUISITION_ID = /^acq_[A-Za-z0-9_-]{1,64}$/;
const CLAIM_REFERENCE = /^clm_[A-Za-z0-9_-]{1,128}$/;
const CLAIM_COOKIE_PATH = "/dashboard/onboarding";
const CLAIM_TTL_SECONDS = 30 * 60;
const REFRESH_SECONDS = 2;

function claimCookieName(c: UiContext): string {
  return new URL(c.req.url).protocol === "https:" ? "__Secure-passport-claim" : "passport-claim";
}

/**
 * The claim reference arrives in the URL fragment, which never reaches a server; the page's
 * script hands it over once and it is kept, HttpOnly, only for the onboarding pages.
 */
function claimReference(c: UiContext, acquisitionId: string): string | undefined {
  const [id, reference] = (getCookie(c, claimCookieName(c)) ?? "").split("~");
  return id === acquisitionId && reference && CLAIM_REFERENCE.test(reference) ? reference : undefined;
}

function onboardingPath(acquisitionId: string): string {
  return `/dashboard/onboarding?${new URLSearchParams({ acquisition: acquisitionId })}`;
}

const NEXT_STEPS: Record<Acquisition["next"], string> = {
  wait: "Nothing to do: this page follows set-up by itself.",
  claim: "Claim the passport to manage it in the Dashboard.",
  contact_support:
    "Contact support and send them the details below. Never send the registration token, and do not try to work around the failure by creating a new account or passport.",
};

/** The text a customer pastes into a support request: everything support needs, nothing secret. */
function supportText(support: SupportDetails): string {
  const account = support.cloud_account;
  return [
    `Acquisition: ${support.acquisition_id}`,
    `Failed stage: ${support.stage_label} (${support.stage})`,
    `Time: ${support.at}`,
    `Error: ${support.error_code ?? "none recorded"}${support.message ? ` - ${support.message}` : ""}`,
    `Cloud account: ${account.aws_account_id ?? account.customer_identifier ?? "not known (the marketplace did not identify it)"}`,
    `Product: ${account.product_code ?? "not known"}`,
  ].join("\n");
}

function SupportPanel(props: { support: SupportDetails }) {
  return (
    <section id="support-details" aria-labelledby="support-heading">
      <h3 id="support-heading">What to send to support</h3>
      <pre id="support-text">{supportText(props.support)}</pre>
      <button type="button" class="secondary small" data-copy="support-text" data-copy-what="Support details" hidden>
        Copy details
      </button>
    </section>
  );
}

/** Where the claim reference is taken out of the fragment (with script) or pasted (without). */
function ClaimReferenceForm(props: { acquisitionId: string }) {
  return (
    <form method="post" action="/dashboard/onboarding/reference" id="claim-stash" class="panel">
      <input type="hidden" name="acquisition" value={props.acquisitionId} />
      <label for="claim_reference">Claim reference</label>
      <p class="hint" id="claim-reference-hint">
        Filled in automatically from the link the marketplace sent you here with. Without JavaScript, paste the part
        after <code>#claim=</code> in the address bar.
      </p>
      <input id="claim_reference" name="claim_reference" autocomplete="off" aria-describedby="claim-reference-hint" />
      <p>
        <button type="submit">Continue</button>
      </p>
    </form>
  );
}

/** The stages that have not succeeded yet, in order. */
function pendingStages(acquisition: Acquisition): Stage[] {
  const succeeded = new Set(acquisition.stages.filter((s) => s.status === "succeeded").map((s) => s.stage));
  return STAGES.filter((stage) => !succeeded.has(stage));
}

/**
 * What is still to happen before the passport is the customer's, in words: set-up is never called
 * complete while a stage is pending, and the claim, which waits for the customer, is named as theirs.
 */
function StillPending(props: { acquisition: Acquisition; choosing: boolean }) {
  const pending = pendingStages(props.acquisition).filter((stage) => stage !== "claim");
  const labels = pending.map((stage) => STAGE_LABELS[stage]).join(", ");
  return (
    <p id="still-pending">
      {pending.length === 0 ? "Every set-up stage has succeeded but the last. " : null}
      {pending.length > 0 && props.choosing
        ? `Still pending: ${labels}. They run once you claim the passport and choose the organisation that holds the subscription. `
        : null}
      {pending.length > 0 && !props.choosing ? `Still pending: ${labels}. ` : null}
      The last step is yours: {NEXT_STEPS.claim.charAt(0).toLowerCase()}
      {NEXT_STEPS.claim.slice(1)}
    </p>
  );
}

function StageList(props: { acquisition: Acquisition }) {
  const reached = new Map(props.acquisition.stages.map((s) => [s.stage, s]));
  const finished = props.acquisition.status === "failed";
  const awaitingClaim = props.acquisition.status === "completed" && !props.acquisition.claimed;
  return (
    <ol class="stages" aria-label="Set-up stages">
      {STAGES.map((stage: Stage) => {
        const row = reached.get(stage);
        const status =
          row?.status ?? (finished ? "not reached" : stage === "claim" && awaitingClaim ? "your step" : "pending");
        return (
          <li>
            <strong>{row?.label ?? STAGE_LABELS[stage]}</strong>
            <span class={`badge st-${status.replace(" ", "-")}`}>{status}</span>
            {row ? (
              <div class="detail">
                {row.error?.message ?? row.outcome ?? ""}
                {row.attempts > 1 ? ` (attempt ${row.attempts})` : ""} <Time at={row.at} />
              </div>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}

const CHECKLIST_STATES: Record<Acquisition["checklist"][number]["state"], string> = {
  done: "done",
  pending: "pending",
  failed: "failed",
  confirm: "yours to confirm",
};

/**
 * The completion checklist of spec 4.3, each item with its state: what the service recorded, and
 * what only the customer can confirm (the Dashboard and the Resolver show the intended passport;
 * no secret was copied anywhere).
 */
function CompletionChecklist(props: { checklist: Acquisition["checklist"] }) {
  return (
    <section class="panel" id="completion-checklist" aria-labelledby="checklist-heading">
      <h2 id="checklist-heading">Completion checklist</h2>
      <ul class="checklist">
        {props.checklist.map((entry) => (
          <li data-item={entry.item}>
            <strong>{entry.label}</strong>
            <span class={`badge st-${entry.state}`}>{CHECKLIST_STATES[entry.state]}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

function ClaimedPassport(props: { acquisition: Acquisition; passport?: PassportView; resolverBase: string }) {
  const id = props.acquisition.passport?.identity_id;
  if (!id) return null;
  const { passport } = props;
  return (
    <section class="panel" aria-labelledby="passport-heading">
      <h2 id="passport-heading">Your API passport</h2>
      <dl class="facts">
        <dt>Identity id</dt>
        <dd>
          <code id="identity-id">{id}</code>{" "}
          <button type="button" class="secondary small" data-copy="identity-id" hidden>
            Copy id
          </button>
        </dd>
        {passport ? (
          <>
            <dt>Family</dt>
            <dd>{passport.family === "api" ? "API passport" : "Agent passport"}</dd>
            <dt>Organisation</dt>
            <dd>
              <a href={`/dashboard/organisations/${passport.organisation.id}`}>{passport.organisation.name}</a>{" "}
              <code>{passport.organisation.id}</code>
            </dd>
            <dt>State</dt>
            <dd>
              <span class={`badge s-${passport.state.lifecycle}`}>{passport.state.lifecycle}</span> as of{" "}
              <Time at={passport.state.as_of} />
            </dd>
          </>
        ) : null}
      </dl>
      {passport && passport.organisation.name === "Marketplace account" ? (
        <p class="notice" id="name-prompt">
          Your organisation is published under the neutral name “{passport.organisation.name}”.{" "}
          <a href={`/dashboard/organisations/${passport.organisation.id}`}>Name your organisation</a> so consumers
          checking this passport learn who stands behind it.
        </p>
      ) : null}
      {props.acquisition.passport?.lifecycle === "suspended" ? (
        <p class="notice" id="suspended-adopted">
          This subscription adopted your organisation's suspended passport: it keeps its identity id and stays suspended
          until you reactivate it in the Dashboard, which re-evaluates its bindings and evidence.
        </p>
      ) : null}
      <p>Confirm it is the passport you meant, then re-check it in the resolver (what anyone else sees):</p>
      <ul>
        <li>
          <a href={`/dashboard/passports/${id}`}>Open it in the Dashboard</a>
        </li>
        <li>
          <a href={`${props.resolverBase}/p/${id}`}>Resolver proof page</a>
        </li>
        <li>
          <a href={`${props.resolverBase}/api/p/${id}.json`}>Machine-readable record (JSON)</a>
        </li>
      </ul>
    </section>
  );
}

/** What GET /v1/organisations answers, per item. */
interface OrganisationItem {
  id: string;
  name: string;
  role: string;
}

/**
 * For a cloud account seen for the first time: the organisations the viewer owns or administers,
 * offered to hold the subscription (their API passport is reused), or a new one.
 */
function OrganisationChoice(props: { organisations: OrganisationItem[] }) {
  const choices = props.organisations.filter((o) => roleAtLeast(o.role, "admin"));
  if (choices.length === 0) {
    return <p>A new organisation will hold this subscription, with you as its owner.</p>;
  }
  return (
    <fieldset id="organisation-choice">
      <legend>Which organisation holds this subscription?</legend>
      <p class="hint">
        Choose one you already run to keep its parent and its API passport (if it has several, you choose which next);
        nothing new is published for it.
      </p>
      {choices.map((o) => (
        <label class="choice">
          <input type="radio" name="organisation_id" value={o.id} required /> {o.name} <code>{o.id}</code> ({o.role})
        </label>
      ))}
      <label class="choice">
        <input type="radio" name="organisation_id" value="" required /> A new organisation, with me as its owner
      </label>
    </fieldset>
  );
}

/** A passport the claim may adopt, as the `passport-choice-required` problem lists it. */
interface PassportCandidate {
  identity_id: string;
  display_name: string | null;
  /** Present on a suspended passport, offered when the organisation has none in use. */
  lifecycle?: "suspended";
}

/** The organisation chosen at the claim, and its active passports when it has several. */
interface PassportChoiceState {
  organisationId: string;
  candidates: PassportCandidate[];
}

const CHOICE_PROBLEMS = new Set([
  `${PROBLEM_TYPE_BASE}passport-choice-required`,
  `${PROBLEM_TYPE_BASE}passport-not-adoptable`,
]);

/** The candidates a refused claim listed, when the customer must choose among them. */
function passportChoiceFrom(problem: Problem, organisationId: string): PassportChoiceState | undefined {
  if (!organisationId || !CHOICE_PROBLEMS.has(problem.type) || !Array.isArray(problem.candidates)) return undefined;
  const candidates = (problem.candidates as PassportCandidate[]).filter((p) => typeof p?.identity_id === "string");
  return candidates.length ? { organisationId, candidates } : undefined;
}

/**
 * The organisation the customer chose has several active passports of the product's family: which
 * one the subscription adopts (it keeps its identity id, so consumers that pinned it see no change).
 */
function PassportChoice(props: { acquisitionId: string; choice: PassportChoiceState; organisationName?: string }) {
  const { choice } = props;
  return (
    <fieldset id="passport-choice">
      <legend>Which passport does this subscription adopt?</legend>
      <input type="hidden" name="organisation_id" value={choice.organisationId} />
      <p class="hint">
        {props.organisationName ?? "The organisation"} <code>{choice.organisationId}</code> has several passports this
        subscription could adopt. The one you choose keeps its identity id; the others are left as they are.{" "}
        <a href={onboardingPath(props.acquisitionId)}>Choose another organisation</a>
      </p>
      {choice.candidates.map((p) => (
        <label class="choice">
          <input type="radio" name="passport_id" value={p.identity_id} required /> {p.display_name ?? "(no name)"}{" "}
          <code>{p.identity_id}</code>
          {p.lifecycle === "suspended" ? " (suspended)" : null}
        </label>
      ))}
    </fieldset>
  );
}

async function onboardingPage(
  c: UiContext,
  acquisitionId: string,
  claimProblem?: Problem,
  passportChoice?: PassportChoiceState,
) {
  const viewer = c.get("viewer");
  const reference = claimReference(c, acquisitionId);
  if (!viewer) {
    // Take the reference out of the fragment first, then sign in and come back.
    if (reference) return c.redirect(signInLocation(onboardingPath(acquisitionId)), 303);
    return c.html(
      <Layout title="Set up your API passport">
        <h1>Set up your API passport</h1>
        <ClaimReferenceForm acquisitionId={acquisitionId} />
        <p>
          <a href={signInLocation(onboardingPath(acquisitionId))}>Sign in</a> to follow set-up and claim your passport.
        </p>
      </Layout>,
    );
  }
  const api = c.get("api");
  const found = await api.call<Acquisition>(`/v1/acquisitions/${encodeURIComponent(acquisitionId)}`, {
    headers: reference ? { "x-claim-reference": reference } : {},
  });
  if (!found.ok) {
    return c.html(
      <Layout title="Set up your API passport" viewer={viewer}>
        <h1>Set up your API passport</h1>
        <ProblemMessage problem={found.problem} />
        {reference ? (
          <p>The claim reference may have expired (it lasts 30 minutes) or been used already.</p>
        ) : (
          <ClaimReferenceForm acquisitionId={acquisitionId} />
        )}
      </Layout>,
      found.problem.status as 404,
    );
  }
  const acquisition = found.body;
  const running = acquisition.status === "received" || acquisition.status === "processing";
  const passport: ApiResult<PassportView> | undefined =
    acquisition.claimed_by_you && acquisition.passport
      ? await api.call<PassportView>(`/v1/passports/${acquisition.passport.identity_id}`)
      : undefined;
  const failedStage = acquisition.error?.stage as Stage | undefined;
  const choosing = acquisition.status === "completed" && !acquisition.claimed && acquisition.account === null;
  const organisations = choosing ? await api.call<{ items: OrganisationItem[] }>("/v1/organisations") : undefined;

  return c.html(
    <Layout title="Set up your API passport" viewer={viewer} noscriptRefresh={running ? REFRESH_SECONDS : undefined}>
      <h1>Set up your API passport</h1>
      <div data-refresh-root data-outcome={acquisition.status}>
        <p>
          Acquisition <code>{acquisition.acquisition_id}</code>, started <Time at={acquisition.created_at} />.
        </p>
        {running ? (
          <p class="notice" role="status" data-refresh={String(REFRESH_SECONDS)}>
            Setting up… this page updates by itself.
          </p>
        ) : null}
        {acquisition.status === "failed" && acquisition.error ? (
          <div class="problem" role="alert" id="failure">
            <p>
              <strong>Set-up failed at “{failedStage ? STAGE_LABELS[failedStage] : acquisition.error.stage}”.</strong>{" "}
              {acquisition.error.message}
            </p>
            <p>
              When: <Time at={acquisition.error.at} />
            </p>
            <p>
              <strong>What to do next:</strong> {NEXT_STEPS[acquisition.next]}
            </p>
            {acquisition.support ? <SupportPanel support={acquisition.support} /> : null}
          </div>
        ) : null}
        <StageList acquisition={acquisition} />
        <CompletionChecklist checklist={acquisition.checklist} />
        {acquisition.status === "completed" && !acquisition.claimed ? (
          <form method="post" action="/dashboard/onboarding/claim" class="panel" id="claim">
            <h2>Claim your passport</h2>
            <StillPending acquisition={acquisition} choosing={choosing} />
            <p>
              You are signed in as <code>{viewer.subject}</code>; the marketplace account and its passport will be
              managed by this sign-in.
            </p>
            <input type="hidden" name="csrf" value={viewer.csrf} />
            <input type="hidden" name="acquisition" value={acquisition.acquisition_id} />
            {choosing && passportChoice ? (
              <PassportChoice
                acquisitionId={acquisition.acquisition_id}
                choice={passportChoice}
                organisationName={
                  organisations?.ok
                    ? organisations.body.items.find((o) => o.id === passportChoice.organisationId)?.name
                    : undefined
                }
              />
            ) : choosing ? (
              <OrganisationChoice organisations={organisations?.ok ? organisations.body.items : []} />
            ) : null}
            {claimProblem ? <ProblemMessage problem={claimProblem} id="claim-problem" /> : null}
            <button type="submit">Claim this passport</button>
          </form>
        ) : null}
        {acquisition.claimed && !acquisition.claimed_by_you ? (
          <p class="panel">
            This acquisition was claimed by another sign-in. Ask one of the account's owners to add you.
          </p>
        ) : null}
        {acquisition.claimed_by_you ? (
          <ClaimedPassport
            acquisition={acquisition}
            passport={passport?.ok ? passport.body : undefined}
            resolverBase={c.env.RESOLVER_BASE_URL}
          />
        ) : null}
      </div>
    </Layout>,
    claimProblem ? (claimProblem.status as 400) : 200,
  );
}

/** The onboarding page a marketplace buyer lands on (spec 4.3 steps 9-10). */
export function onboardingRoutes(fetchApi: ApiFetch) {
  const routes = new Hono<UiEnv>();
  routes.use("*", signedIn(fetchApi, { optional: true }));

  routes.get("/", async (c) => {
    const id = c.req.query("acquisition") ?? "";
    if (!ACQUISITION_ID.test(id)) return c.redirect("/dashboard/passports", 303);
    return onboardingPage(c, id);
  });

  routes.post("/reference", async (c) => {
    const form = await c.req.formData();
    const id = String(form.get("acquisition") ?? "");
    const reference = String(form.get("claim_reference") ?? "").trim();
    if (!ACQUISITION_ID.test(id)) return c.text("Refused.", 403);
    if (CLAIM_REFERENCE.test(reference)) {
      setCookie(c, claimCookieName(c), `${id}~${reference}`, {
        path: CLAIM_COOKIE_PATH,
        httpOnly: true,
        secure: new URL(c.req.url).protocol === "https:",
        sameSite: "Lax",
        maxAge: CLAIM_TTL_SECONDS,
      });
    }
    return c.redirect(onboardingPath(id), 303);
  });

  routes.post("/claim", async (c) => {
    const form = await c.req.formData();
    const id = String(form.get("acquisition") ?? "");
    if (!ACQUISITION_ID.test(id)) return c.redirect("/dashboard/passports", 303);
    const session = c.get("session");
    if (!session) return c.redirect(signInLocation(onboardingPath(id)), 303);
    const refused = await refuseForgedPost(session, form);
    if (refused) {
      return onboardingPage(c, id, {
        type: `${PROBLEM_TYPE_BASE}forbidden`,
        title: "Form refused",
        status: 403,
        detail: refused,
      });
    }
    const organisationId = String(form.get("organisation_id") ?? "");
    const passportId = String(form.get("passport_id") ?? "");
    const claimed = await c.get("api").call<Acquisition>(`/v1/acquisitions/${encodeURIComponent(id)}/claim`, {
      method: "POST",
      body: {
        claim_reference: claimReference(c, id) ?? "",
        ...(organisationId ? { organisation_id: organisationId } : {}),
        ...(passportId ? { passport_id: passportId } : {}),
      },
    });
    if (!claimed.ok) {
      return onboardingPage(c, id, claimed.problem, passportChoiceFrom(claimed.problem, organisationId));
    }
    deleteCookie(c, claimCookieName(c), { path: CLAIM_COOKIE_PATH });
    return c.redirect(onboardingPath(id), 303);
  });

  return routes;
}
