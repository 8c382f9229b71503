import type { DashboardApi } from "./api.ts";
import type { Viewer } from "./layout.tsx";
import type { Session } from "./session.ts";

/**
 * The Dashboard pages' context: the signed-in caller and their client of the Dashboard API (unset
 * only on pages that admit signed-out visitors).
 */
export type UiEnv = {
  Bindings: Env;
  Variables: { api: DashboardApi; session: Session; viewer: Viewer };
};
