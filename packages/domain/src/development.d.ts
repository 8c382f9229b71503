/** Issuer of the tokens `npm run token` signs; the control plane trusts it only when ENVIRONMENT is "development". */
export declare const DEVELOPMENT_ISSUER = "urn:svc:passport:development";
