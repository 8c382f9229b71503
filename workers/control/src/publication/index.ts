// The publication wing's face (docs/control-layout.md): what the rest of the control plane may use.
export type { PublicationAnnounced } from "./announce.ts";
export { maintainLog } from "./log/append.ts";
export { TransparencyLog } from "./log/transparency-log.ts";
export { drainOutbox, inGroupsOf, type PublishEnv, publishOrDefer } from "./publish.ts";
export { PurgeBudget } from "./purge-budget.ts";
export { PublicationSequencer } from "./sequencer.ts";
