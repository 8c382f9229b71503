import type { Principal } from "./access/authenticate.ts";
import type { Database } from "./db/client.ts";

export type AppEnv = {
  Bindings: Env;
  Variables: { principal: Principal; db: Database };
};
