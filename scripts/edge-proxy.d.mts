/** Serves host:port in front of the Worker at `upstream`, with the edge's client address headers. */
export function startEdgeProxy(options: {
  host: string;
  port: number;
  upstream: string | URL;
}): Promise<() => Promise<void>>;
