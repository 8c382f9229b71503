import { html } from "hono/html";

const STYLE = html`<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
  label { display: block; margin: .75rem 0 .25rem; }
  input, select, button { font: inherit; padding: .35rem .5rem; max-width: 100%; box-sizing: border-box; }
  code { overflow-wrap: anywhere; }
  button { margin-top: 1rem; }
  .note { color: #555; font-size: .9rem; }
</style>`;

/** The simulated listing: pick a customer and an outcome, then "subscribe and set up". */
export function marketplacePage(fulfillmentUrl: string) {
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Simulated marketplace: Passport API listing</title>${STYLE}</head>
<body>
  <h1>Passport API (free) <small>simulated marketplace</small></h1>
  <p class="note">Local development only. Subscribing issues a registration token and posts it to
    <code>${fulfillmentUrl}</code>, as the marketplace's "Set up your account" button does.</p>
  <form method="post" action="/sim/subscribe">
    <label for="account">Your cloud account id (12 digits; leave empty for a new one, reuse one to be a returning customer)</label>
    <input id="account" name="customer_aws_account_id" pattern="\\d{12}" placeholder="111122223333">
    <label for="product">Product code</label>
    <select id="product" name="product_code">
      <option value="prod-passport-api">prod-passport-api (the API passport listing)</option>
      <option value="prod-unknown-listing">prod-unknown-listing (not mapped: fails at product mapping)</option>
    </select>
    <label for="scenario">What the registration token does</label>
    <select id="scenario" name="scenario">
      <option value="ok">resolves normally</option>
      <option value="throttle">is throttled once, then resolves (retried)</option>
      <option value="internal">hits an internal error once, then resolves (retried)</option>
      <option value="expired">has expired (restart set-up)</option>
      <option value="disabled">API disabled in this Region</option>
      <option value="not-entitled">resolves, but the customer has no entitlement</option>
    </select>
    <label for="offer">Offer</label>
    <select id="offer" name="offer_type">
      <option value="">the free listing ($0 software charge)</option>
      <option value="free-trial">a free trial of a priced offer (refused: not zero charge)</option>
    </select>
    <label><input type="checkbox" name="legacy"> legacy product (CustomerIdentifier, no LicenseArn)</label>
    <button type="submit">Subscribe ($0) and set up your account</button>
  </form>
</body>
</html>`;
}

/** What the buyer's browser sees for a moment: a form that posts the token to the fulfillment URL. */
export function setupRedirectPage(fulfillmentUrl: string, token: string, offerType?: string) {
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Setting up your account…</title>${STYLE}</head>
<body>
  <p>Taking you to the seller to set up your account…</p>
  <form id="handoff" method="post" action="${fulfillmentUrl}">
    <input type="hidden" name="x-amzn-marketplace-token" value="${token}">
    ${offerType ? html`<input type="hidden" name="x-amzn-marketplace-offer-type" value="${offerType}">` : ""}
    <noscript><button type="submit">Continue</button></noscript>
  </form>
  <script>document.getElementById("handoff").submit();</script>
</body>
</html>`;
}
