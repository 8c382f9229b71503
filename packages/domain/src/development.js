// Plain JavaScript (typed by development.d.ts) so the Node scripts import it on any supported Node,
// without TypeScript support.

/** Issuer of the tokens `npm run token` signs; the control plane trusts it only when ENVIRONMENT is "development". */
export const DEVELOPMENT_ISSUER = "urn:svc:passport:development";
