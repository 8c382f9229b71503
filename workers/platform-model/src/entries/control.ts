// The control plane under the platform model (docs/platform-model.md): the same Worker, with its
// KV and D1 bindings modelled and its Durable Objects' requests counted. The tests and `npm start`
// run this entry unless PLATFORM_MODEL=off; the deploy never does.
import control, {
  TransparencyLog as Log,
  PurgeBudget as Purges,
  PublicationSequencer as Sequencer,
} from "../../../control/src/index.ts";
import { modelledWorker } from "../worker.ts";

// Every D1 database is one modelled database: each shard and the directory (docs/sharding.md).
const model = modelledWorker({ kv: ["SNAPSHOTS"], d1: ["DB", "DB_SHARD_1", "DIRECTORY"] });

export default model.handler(control);
export const PublicationSequencer = model.durableObject(Sequencer);
export const TransparencyLog = model.durableObject(Log);
export const PurgeBudget = model.durableObject(Purges);
