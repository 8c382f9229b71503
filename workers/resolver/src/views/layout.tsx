import type { Child } from "hono/jsx";

/** No script, no external resources: the page is plain server-rendered HTML. */
export const PAGE_SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
code,.id{font-family:ui-monospace,monospace;word-break:break-all}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{color:#555}dd{margin:0}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eee;vertical-align:top}
.state{padding:.6rem .9rem;border-radius:.4rem;border:1px solid}
.state-active{background:#eefaf0;border-color:#8bc79a}.state-suspended{background:#fff7e6;border-color:#e0b050}
.state-revoked{background:#fdecec;border-color:#d98080}.state-retired{background:#f1f1f4;border-color:#a8a8b8}
.muted{color:#666;font-size:.9rem}.expired{color:#a33;font-weight:600}.verified{color:#1d6b35;font-weight:600}
td,dd,a{overflow-wrap:anywhere}
@media (max-width:40rem){body{margin:1rem auto}dl{grid-template-columns:1fr}dt{margin-top:.4rem}
thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}
table,tbody,tr,td{display:block}tr{border-bottom:1px solid #ddd;padding:.4rem 0}td{border:0;padding:.15rem 0}
td[data-label]::before{content:attr(data-label);display:block;color:#555;font-size:.85rem}}
`;

export function Layout(props: { title: string; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{props.title}</title>
        <style>{STYLE}</style>
      </head>
      <body>{props.children}</body>
    </html>
  );
}

/** The human form of a problem answer: same status and problem type as the JSON route. */
export function ProblemPage(props: { title: string; detail: string; type: string }) {
  return (
    <Layout title={props.title}>
      <h1>{props.title}</h1>
      <p>{props.detail}</p>
      <p class="muted">
        Problem type <code>{props.type}</code>
      </p>
      <p>
        <a href="/">Look up another passport</a>
      </p>
    </Layout>
  );
}
