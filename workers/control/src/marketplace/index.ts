// The marketplace wing's face (docs/control-layout.md): what the rest of the control plane may use.
export { consumeAcquisitions, consumeDeadLetteredAcquisitions } from "./consumer.ts";
export { marketplaceApi } from "./dashboard-routes.ts";
export { deleteExpiredAcquisitions } from "./queries/expiry.ts";
export { marketplace } from "./routes.ts";
export { STAGE_LABELS, STAGES, type Stage } from "./stages.ts";
export { SubscriptionHistory } from "./views.ts";
