// The binding-checks wing's face (docs/control-layout.md): what the rest of the control plane may use.
export { consumeBindingChecks, enqueueDueChecks } from "./recheck.ts";
export { checks as bindingChecksApi, RecheckView } from "./routes.ts";
