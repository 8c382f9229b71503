// Preloaded (`node --import`) by `npm run call-demo` and `npm run passport`: when `npm start` runs,
// its resolver and demo API addresses become the defaults (PASSPORT_RESOLVER, DEMO_API), so both
// follow the ports it was started on. An address set in the environment is kept.
import { localAddresses } from "./local-addresses.mjs";

const running = localAddresses();
if (running) {
  process.env.PASSPORT_RESOLVER ??= running.resolver;
  process.env.DEMO_API ??= running.demoApi;
}
