import type { Database } from "./db/client.ts";
import type { Role } from "./db/organisations.ts";
import type { Shards } from "./db/shards.ts";

/** Who a request is made by, as authentication established it (access/authenticate.ts). */
export interface Principal {
  subject: string;
  /** Membership a development token asks for; ignored outside development. */
  developmentMembership?: { organisationId: string; role: string };
}

export type AppEnv = {
  Bindings: Env;
  Variables: {
    principal: Principal;
    /** The control plane's D1 shards and directory (docs/sharding.md). */
    shards: Shards;
    /**
     * The shard that holds what the route names: the passport's organisation's for
     * `/v1/passports/{id}…`, the organisation's for `/v1/organisations/{id}…` (api/routing.ts),
     * shard 0 for the service-wide tables elsewhere. Routes that span organisations use `shards`.
     */
    db: Database;
    /**
     * The least role the route's declaration (`operation({ role })`, api/operations.ts) allows;
     * "any member" is viewer. Routes enforce this one, never a second copy of it.
     */
    declaredRole: Role;
  };
};
