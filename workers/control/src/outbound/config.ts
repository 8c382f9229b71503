import type { OutboundPolicy, Transport } from "./fetch.ts";

const TIMEOUT_MS = 3000;
const MAX_BYTES = 128 * 1024;
const MAX_REDIRECTS = 3;

function hostOf(url: string | undefined): string[] {
  try {
    return url ? [new URL(url).hostname.toLowerCase()] : [];
  } catch {
    return [];
  }
}

/**
 * Production sends checks to the internet with global fetch; development (`npm start`, tests)
 * sends them to the hosts simulator, which receives the same https URL. The simulator binding is
 * honoured only in the development environment.
 */
export function outboundFor(env: Env): { transport: Transport; policy: OutboundPolicy } {
  const development = env.ENVIRONMENT === "development";
  const simulator = development ? env.OUTBOUND_SIMULATOR : undefined;
  return {
    transport: simulator ?? { fetch: (request) => fetch(request) },
    policy: {
      allowLoopbackHttp: development,
      ownHosts: [...hostOf(env.RESOLVER_BASE_URL), ...hostOf(env.DASHBOARD_ONBOARDING_URL)],
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_BYTES,
      maxRedirects: MAX_REDIRECTS,
    },
  };
}
