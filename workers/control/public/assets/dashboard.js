// The Dashboard's only script. Every page works without it; it adds the copy buttons, carries the
// claim reference out of the URL fragment, and refreshes the onboarding progress in place.

const status = document.getElementById("live-status");

/** Announces `text` to screen readers; clearing first makes a repeated message heard again. */
function say(text) {
  if (!status) return;
  status.textContent = "";
  setTimeout(() => {
    status.textContent = text;
  }, 50);
}

for (const button of document.querySelectorAll("button[data-copy]")) {
  button.hidden = false;
  const label = button.textContent;
  const what = button.getAttribute("data-copy-what") || "Identity id";
  button.addEventListener("click", () => {
    const source = document.getElementById(button.getAttribute("data-copy"));
    const text = source ? source.textContent.trim() : "";
    const done = () => {
      button.textContent = "Copied";
      say(`${what} copied to the clipboard.`);
      setTimeout(() => {
        button.textContent = label;
      }, 2000);
    };
    if (navigator.clipboard) {
      navigator.clipboard.writeText(text).then(done, () => say("Copying failed; select the text and copy it."));
    }
  });
}

const stash = document.getElementById("claim-stash");
if (stash) {
  const claim = new URLSearchParams(location.hash.slice(1)).get("claim");
  if (claim) {
    stash.elements.namedItem("claim_reference").value = claim;
    history.replaceState(null, "", location.pathname + location.search);
    stash.submit();
  }
}

const region = document.querySelector("[data-refresh]");
if (region) {
  const seconds = Number(region.getAttribute("data-refresh")) || 2;
  const tick = () => {
    fetch(location.href, { credentials: "same-origin", headers: { accept: "text/html" } })
      .then((response) => response.text())
      .then(
        (html) => {
          const next = new DOMParser().parseFromString(html, "text/html").querySelector("[data-refresh-root]");
          const root = document.querySelector("[data-refresh-root]");
          if (next && root) {
            root.innerHTML = next.innerHTML;
            if (!next.querySelector("[data-refresh]")) {
              say(`Set-up finished: ${next.getAttribute("data-outcome") || ""}`);
              return;
            }
          }
          setTimeout(tick, seconds * 1000);
        },
        () => setTimeout(tick, seconds * 2000),
      );
  };
  setTimeout(tick, seconds * 1000);
}

// The passport page's section links open the section they point at. Chromium opens a closed
// disclosure that holds a link's target by itself; this does it where a browser does not.
function openSectionOf(hash) {
  const target = hash.length > 1 ? document.getElementById(decodeURIComponent(hash.slice(1))) : null;
  const fold = target ? target.closest("details") : null;
  if (fold) fold.open = true;
}
openSectionOf(location.hash);
window.addEventListener("hashchange", () => openSectionOf(location.hash));
