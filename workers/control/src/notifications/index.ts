// The notifications wing's face (docs/control-layout.md, docs/events.md): what the rest of the
// control plane may use.
export { consumeDeadLetteredNotifications, consumeNotifications } from "./consumer.ts";
export { forgetSettledDeliveries } from "./retention.ts";
export { notificationsApi } from "./routes.ts";
