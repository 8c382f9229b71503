// What Cloudflare's edge does to a request before a Worker sees it, as far as the service depends
// on it locally: `cf-connecting-ip` is the address of the connecting client, whatever the client
// sent under that name, and that address is appended to `x-forwarded-for`. `npm start` puts one
// of these in front of each Worker's port, so the per-client rate limits (docs/limits.md) key on
// the real client address locally too, and a client cannot pick its own bucket.
import { createServer, request as forward } from "node:http";

/** The client's address as the edge reports it: IPv4 without the IPv6-mapped prefix. */
function addressOf(socket) {
  const address = socket.remoteAddress ?? "";
  return address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
}

/** The request headers the Worker receives: the client's own, with the edge's address headers. */
function edgeHeaders(rawHeaders, address) {
  const headers = {};
  let forwardedFor = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    const value = rawHeaders[i + 1];
    if (name === "cf-connecting-ip") continue;
    if (name === "x-forwarded-for") forwardedFor = [...forwardedFor, value];
    else headers[name] = name in headers ? [headers[name], value].flat() : value;
  }
  headers["cf-connecting-ip"] = address;
  headers["x-forwarded-for"] = [...forwardedFor, address].join(", ");
  return headers;
}

/**
 * Listens on host:port and hands every request to the Worker at `upstream` (a URL), with the
 * edge's headers; the Host header is the client's, so the Worker sees its public URL. Resolves
 * to a function that stops listening.
 */
export async function startEdgeProxy({ host, port, upstream }) {
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    const outgoing = forward(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: edgeHeaders(req.rawHeaders, addressOf(req.socket)),
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    outgoing.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`the local Worker did not answer: ${error.message}\n`);
    });
    // A client that goes away takes its request to the Worker with it.
    res.on("close", () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    req.pipe(outgoing);
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
}
