// Node-side tests (browser, CLI integration) and scripts/cold-start.mjs: the local service exactly as
// `npm start` runs it (scripts/dev.mjs), on free ports and with its own fresh state directory, so it
// shares neither ports nor SQLite files with another start on the same machine.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const root = join(import.meta.dirname, "..");

export interface ServiceInfo {
  resolver: string;
  control: string;
  marketplace: string;
  /** The hosts simulator's admin API (fixtures for bound hosts, docs/bindings.md). */
  hosts: string;
  /** The demo API of the call path (workers/demo-api), answering as https://payments.demo.example. */
  demoApi: string;
  /** The state directory of this start (demo-passports.json). */
  stateDir: string;
  /** The owner token `npm start` prints. */
  token: string;
  demo: { id: string; family: string; name: string }[];
}

/** A port on 127.0.0.1 that nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}

/**
 * Starts `node scripts/dev.mjs` and reads what it prints for a newcomer. With `stateDir`, the start
 * keeps its state there and leaves it when it stops (a restart test starts again on it); otherwise
 * it gets a fresh directory, removed when it stops.
 */
export async function startService(
  options: { stateDir?: string } = {},
): Promise<{ info: ServiceInfo; child: ChildProcess }> {
  const [resolverPort, controlPort, marketplacePort, hostsPort, demoApiPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), "passport-state-"));
  const child = spawn(process.execPath, ["scripts/dev.mjs"], {
    cwd: root,
    env: {
      ...process.env,
      RESOLVER_PORT: String(resolverPort),
      CONTROL_PORT: String(controlPort),
      MARKETPLACE_PORT: String(marketplacePort),
      HOSTS_SIM_PORT: String(hostsPort),
      DEMO_API_PORT: String(demoApiPort),
      PASSPORT_STATE_DIR: stateDir,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (!options.stateDir) child.once("exit", () => rmSync(stateDir, { recursive: true, force: true }));
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", (chunk) => {
        stdout += chunk;
        if (stdout.includes("Press Ctrl-C to stop.")) resolve();
      });
      child.on("exit", (code) => reject(new Error(`scripts/dev.mjs exited with ${code}:\n${stderr.slice(-3000)}`)));
    });
  } catch (error) {
    await stopService(child);
    throw error;
  }
  const demo = [...stdout.matchAll(/^ {2}(psp_[0-9a-z]{26}) {2}(api|agent)\s+(.+)$/gm)].map((m) => ({
    id: m[1] as string,
    family: m[2] as string,
    name: m[3] as string,
  }));
  const token = /Development token[^\n]*\n\s+(\S+)/.exec(stdout)?.[1];
  if (!token || demo.length === 0) {
    await stopService(child);
    throw new Error(`could not read the start output:\n${stdout}`);
  }
  return {
    child,
    info: {
      resolver: `http://127.0.0.1:${resolverPort}`,
      control: `http://127.0.0.1:${controlPort}`,
      marketplace: `http://127.0.0.1:${marketplacePort}`,
      hosts: `http://127.0.0.1:${hostsPort}`,
      demoApi: `http://127.0.0.1:${demoApiPort}`,
      stateDir,
      token,
      demo,
    },
  };
}

/** SIGTERM, as Ctrl-C would; dev.mjs stops its wrangler children and exits. */
export async function stopService(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
}
