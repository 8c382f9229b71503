// The Node built-ins the verifier CLI uses that its workerd tests import (test/verifier/terminal.test.ts
// runs the CLI in workerd, where nodejs_compat provides them). The workers runtime types do not
// declare them, and Node's full types would clash with the runtime's globals.
declare module "node:url" {
  /** IDNA ToUnicode of a host name; "" when a label does not decode. */
  export function domainToUnicode(domain: string): string;
}
