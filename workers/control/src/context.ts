import type { Principal } from "./auth.ts";
import type { Database } from "./db/client.ts";

export type AppEnv = {
  Bindings: Env;
  Variables: { principal: Principal; db: Database };
};
