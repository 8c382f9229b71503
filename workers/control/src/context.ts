import type { Database } from "./db/client.ts";
import type { Role } from "./db/organisations.ts";

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
    db: Database;
    /**
     * The least role the route's declaration (`operation({ role })`, api/operations.ts) allows;
     * "any member" is viewer. Routes enforce this one, never a second copy of it.
     */
    declaredRole: Role;
  };
};
