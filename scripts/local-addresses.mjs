// Where a running `npm start` listens. The start writes its addresses into its state directory
// (`.wrangler/state/addresses.json`, or PASSPORT_STATE_DIR's), so the commands it prints follow
// the ports it was given: `npm run call-demo`, `npm run passport` and `npm run local-env` read
// them from there instead of assuming 8787 and 8788. The file names the start's process, so an
// address left behind by a start that died is never taken for a running service.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** The state directory `npm start` uses with this environment. */
export const stateDirectory = (env = process.env) =>
  resolve(root, env.PASSPORT_STATE_DIR ?? join(".wrangler", "state"));

const fileIn = (stateDir) => join(stateDir, "addresses.json");

/** Records this process's addresses (`{ resolver, control, marketplace, hosts, demoApi }`). */
export function writeLocalAddresses(stateDir, addresses) {
  writeFileSync(fileIn(stateDir), `${JSON.stringify({ pid: process.pid, ...addresses }, null, 2)}\n`);
}

/** Removes the record at stop, if it is still this process's. */
export function removeLocalAddresses(stateDir) {
  if (localAddresses(stateDir)?.pid === process.pid) rmSync(fileIn(stateDir), { force: true });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/** The addresses of the `npm start` running on this state directory, or undefined when none runs. */
export function localAddresses(stateDir = stateDirectory()) {
  const file = fileIn(stateDir);
  if (!existsSync(file)) return undefined;
  try {
    const addresses = JSON.parse(readFileSync(file, "utf8"));
    return Number.isInteger(addresses.pid) && alive(addresses.pid) ? addresses : undefined;
  } catch {
    return undefined;
  }
}
