// The publication wing's face (docs/control-layout.md): what the rest of the control plane may use.
export { publishOrDefer } from "./publish.ts";
