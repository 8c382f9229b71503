/**
 * The Dashboard's only static assets, served from this Worker so the Content-Security-Policy can
 * stay at 'self' (no inline styles or scripts, no CDN). Every page works without the script; it
 * adds the copy buttons, carries the claim reference out of the URL fragment, and refreshes the
 * onboarding progress in place.
 */
export const STYLESHEET = `
:root{--ink:#1b1f24;--muted:#4d5660;--line:#c9d0d8;--bg:#fff;--panel:#f5f7f9;--accent:#0b57d0;--accent-ink:#fff;
--ok:#116329;--ok-bg:#e6f4ea;--warn:#7a4d00;--warn-bg:#fff4d6;--bad:#a3160e;--bad-bg:#fde8e6;--focus:#b4410e}
*{box-sizing:border-box}
html{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
body{margin:0}
a{color:var(--accent)}
a:hover{text-decoration-thickness:2px}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:var(--bg);padding:.5rem}
.skip:focus{left:.5rem}
header.top{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center;padding:.75rem 1rem;border-bottom:1px solid var(--line);background:var(--panel)}
header.top .brand{font-weight:700;color:var(--ink);text-decoration:none;margin-right:auto}
header.top nav a{margin-right:1rem}
header.top form{display:inline}
main{max-width:68rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem;line-height:1.25;overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:1.75rem 0 .5rem}
h3{font-size:1rem;margin:1rem 0 .25rem}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.95em;overflow-wrap:anywhere}
label{display:block;font-weight:600;margin:.5rem 0 .15rem}
.hint{color:var(--muted);font-size:.9rem;margin:.1rem 0}
input,select,textarea{font:inherit;color:inherit;padding:.45rem .5rem;border:1px solid #6b7580;border-radius:4px;background:#fff;width:100%;max-width:32rem}
input[aria-invalid=true],select[aria-invalid=true]{border-color:var(--bad);border-width:2px}
button,.button{font:inherit;font-weight:600;padding:.45rem .9rem;border-radius:4px;border:1px solid var(--accent);background:var(--accent);color:var(--accent-ink);cursor:pointer;text-decoration:none;display:inline-block;min-height:2.5rem}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}
button.danger{background:#fff;color:var(--bad);border-color:var(--bad)}
button.small{padding:.2rem .6rem;min-height:2rem;font-size:.9rem}
.row{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:flex-end}
.row>div{flex:1 1 12rem}
.row>div.grow{flex:3 1 18rem}
fieldset{border:1px solid var(--line);border-radius:6px;padding:.5rem 1rem 1rem;margin:1rem 0}
legend{font-weight:700;padding:0 .25rem}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:.45rem .5rem;border-bottom:1px solid var(--line)}
th{font-size:.9rem;color:var(--muted)}
.table-wrap{overflow-x:auto}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:999px;font-size:.85rem;font-weight:600;border:1px solid currentColor;white-space:nowrap}
.s-active,.f-fresh,.st-succeeded{color:var(--ok);background:var(--ok-bg)}
.s-suspended,.f-stale,.st-running,.st-pending,.st-retrying{color:var(--warn);background:var(--warn-bg)}
.s-revoked,.s-retired,.f-expired,.st-failed{color:var(--bad);background:var(--bad-bg)}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:1rem;margin:1rem 0}
.facts{display:grid;grid-template-columns:minmax(8rem,max-content) 1fr;gap:.35rem 1rem;margin:0}
.facts dt{color:var(--muted);font-weight:600}
.facts dd{margin:0;overflow-wrap:anywhere}
.notice{border-left:4px solid var(--ok);background:var(--ok-bg);padding:.6rem .9rem;margin:1rem 0}
.problem{border-left:4px solid var(--bad);background:var(--bad-bg);padding:.6rem .9rem;margin:.75rem 0;color:var(--ink)}
.problem strong{color:var(--bad)}
.field-error{color:var(--bad);font-weight:600;margin:.2rem 0}
.timeline{list-style:none;padding:0;margin:0;border-left:3px solid var(--line)}
.timeline li{position:relative;padding:.25rem 0 .75rem 1rem}
.timeline li::before{content:"";position:absolute;left:-.5rem;top:.65rem;width:.7rem;height:.7rem;border-radius:50%;background:var(--accent)}
.timeline time{color:var(--muted);font-size:.9rem}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.inline-form{display:inline}
.pager{display:flex;gap:1rem;margin:1rem 0}
.stages{list-style:none;padding:0;margin:0;counter-reset:stage}
.stages li{display:grid;grid-template-columns:2rem 1fr auto;gap:.25rem .75rem;padding:.6rem 0;border-bottom:1px solid var(--line)}
.stages li::before{counter-increment:stage;content:counter(stage);font-weight:700;color:var(--muted)}
.stages .detail{grid-column:2/4;color:var(--muted);font-size:.95rem}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (max-width:40rem){
  main{padding:.75rem}
  .facts{grid-template-columns:1fr}
  .facts dt{margin-top:.4rem}
  table.stack thead{position:absolute;left:-999px}
  table.stack tr{display:block;border-bottom:1px solid var(--line);padding:.4rem 0}
  table.stack td{display:block;border:0;padding:.15rem 0}
  table.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600;color:var(--muted)}
}
`;

export const SCRIPT = `
(function(){
  var status = document.getElementById("live-status");
  function say(text){ if (status) { status.textContent = ""; setTimeout(function(){ status.textContent = text; }, 50); } }
  document.querySelectorAll("button[data-copy]").forEach(function(button){
    button.hidden = false;
    button.addEventListener("click", function(){
      var source = document.getElementById(button.getAttribute("data-copy"));
      var text = source ? source.textContent.trim() : "";
      var done = function(){ button.textContent = "Copied"; say("Identity id copied to the clipboard."); setTimeout(function(){ button.textContent = "Copy id"; }, 2000); };
      if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, function(){ say("Copying failed; select the id and copy it."); });
    });
  });
  var stash = document.getElementById("claim-stash");
  if (stash) {
    var claim = new URLSearchParams(location.hash.slice(1)).get("claim");
    if (claim) {
      stash.elements.namedItem("claim_reference").value = claim;
      history.replaceState(null, "", location.pathname + location.search);
      stash.submit();
    }
  }
  var region = document.querySelector("[data-refresh]");
  if (region) {
    var seconds = Number(region.getAttribute("data-refresh")) || 2;
    var tick = function(){
      fetch(location.href, { credentials: "same-origin", headers: { accept: "text/html" } }).then(function(r){ return r.text(); }).then(function(html){
        var next = new DOMParser().parseFromString(html, "text/html").querySelector("[data-refresh-root]");
        var root = document.querySelector("[data-refresh-root]");
        if (next && root) {
          root.innerHTML = next.innerHTML;
          if (!next.querySelector("[data-refresh]")) { say("Set-up finished: " + (next.getAttribute("data-outcome") || "")); return; }
        }
        setTimeout(tick, seconds * 1000);
      }, function(){ setTimeout(tick, seconds * 2000); });
    };
    setTimeout(tick, seconds * 1000);
  }
})();
`;
