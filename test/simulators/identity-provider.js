// Local identity-provider simulator: serves an OpenID Connect issuer's public key set over HTTP,
// as an OIDC provider or Cloudflare Access does. The keys come from the JWKS binding.
export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (request.method !== "GET") return new Response("method not allowed", { status: 405 });
    if (pathname === "/.well-known/jwks.json" || pathname === "/cdn-cgi/access/certs") {
      return new Response(env.JWKS, { headers: { "content-type": "application/json" } });
    }
    return new Response("not found", { status: 404 });
  },
};
