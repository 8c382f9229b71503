// `eval "$(npm run --silent local-env)"`: sets RESOLVER, CONTROL, MARKETPLACE and HOSTS (the hosts simulator) in the shell to
// the addresses of the running `npm start`, whatever ports it was given, and TOKEN to a fresh
// development owner token, so the README's commands work as written.
import { signDevelopmentToken } from "./dev-auth.mjs";
import { localAddresses, stateDirectory } from "./local-addresses.mjs";

const running = localAddresses();
if (!running) {
  process.stderr.write(
    `No local service is running on ${stateDirectory()}: start it with \`npm start\` (ports: RESOLVER_PORT, CONTROL_PORT).\n`,
  );
  process.exit(1);
}
console.log(`RESOLVER=${running.resolver}
CONTROL=${running.control}
MARKETPLACE=${running.marketplace}
HOSTS=${running.hosts}
TOKEN=${await signDevelopmentToken()}`);
