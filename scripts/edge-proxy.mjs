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

/** How long to wait for the Worker's "100 Continue" before sending a body anyway, as curl does. */
const CONTINUE_WAIT_MS = 1000;
/** The largest request body Cloudflare's edge accepts on the Free and Pro plans; above it the edge answers 413. */
const EDGE_BODY_LIMIT = 100 * 1024 * 1024;

/** Whether a request carries a body (a length above 0, or chunks). */
function hasBody(req) {
  return req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
}

/**
 * A chunked body, read whole (undefined above the edge's limit): it goes to the Worker with its
 * length, so the Worker can refuse it by its length before a byte is sent.
 */
async function wholeBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.byteLength;
    if (size > EDGE_BODY_LIMIT) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Hands one request to the Worker at `target` and relays its answer. A body is sent only once the
 * Worker asks for it ("Expect: 100-continue"; a client that sent that header itself is told to
 * continue only then), and a chunked one is read first and sent with its length. So a Worker that
 * answers before reading the body, as the control plane does with 413 for an oversized body or
 * 401 without a token, has its own answer relayed: the body it refused is never pushed at a
 * closed connection, which fails with EPIPE and loses the answer.
 */
async function relay(target, req, res, { clientExpects = false } = {}) {
  const headers = edgeHeaders(req.rawHeaders, addressOf(req.socket));
  delete headers.expect;
  let body = hasBody(req) ? req : undefined;
  if (body && headers["transfer-encoding"] !== undefined) {
    if (clientExpects) res.writeContinue();
    clientExpects = false;
    body = await wholeBody(req);
    if (!body) {
      res.writeHead(413, { "content-type": "text/plain", connection: "close" });
      res.end("request body larger than the edge accepts\n");
      return;
    }
    delete headers["transfer-encoding"];
    headers["content-length"] = String(body.byteLength);
  }
  if (body) headers.expect = "100-continue";
  const outgoing = forward({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers });
  let answered = false;
  let bodySent = body === undefined;
  let patience;
  const sendBody = () => {
    if (bodySent || answered) return;
    bodySent = true;
    clearTimeout(patience);
    if (clientExpects) res.writeContinue();
    if (Buffer.isBuffer(body)) outgoing.end(body);
    else body.pipe(outgoing);
  };
  if (body) patience = setTimeout(sendBody, CONTINUE_WAIT_MS);
  outgoing.on("continue", sendBody);
  outgoing.on("response", (answer) => {
    answered = true;
    clearTimeout(patience);
    if (!bodySent) {
      // The Worker answered without the body: what the client still sends is dropped, and the
      // connection closes after the answer.
      res.shouldKeepAlive = false;
      req.resume();
    }
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
    answer.pipe(res);
    answer.on("error", () => res.destroy());
  });
  outgoing.on("error", (error) => {
    clearTimeout(patience);
    // Once the Worker's answer is on its way, a body it stopped reading is no reason to replace it.
    if (answered) return;
    res.writeHead(502, { "content-type": "text/plain", connection: "close" });
    res.end(`the local Worker did not answer: ${error.message}\n`);
  });
  // A client that goes away takes its request to the Worker with it.
  res.on("close", () => {
    clearTimeout(patience);
    if (!res.writableFinished) outgoing.destroy();
  });
  if (!body) outgoing.end();
}

/**
 * Listens on host:port and hands every request to the Worker at `upstream` (a URL), with the
 * edge's headers; the Host header is the client's, so the Worker sees its public URL. Resolves
 * to a function that stops listening.
 */
export async function startEdgeProxy({ host, port, upstream }) {
  const target = new URL(upstream);
  // A client that goes away while its body is read takes its request with it.
  const handle = (req, res, options) => relay(target, req, res, options).catch(() => res.destroy());
  const server = createServer((req, res) => handle(req, res));
  // A client's "Expect: 100-continue" is answered by the Worker, not by this proxy (see relay).
  server.on("checkContinue", (req, res) => handle(req, res, { clientExpects: true }));
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
