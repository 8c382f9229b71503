import { bySubject, limitRequests, POST } from "../api/rate-limit.ts";

/**
 * `POST /v1/passports/{id}/bindings/{bindingId}/verify`, per authenticated subject: each check
 * fetches a tenant-named host, so a tenant cannot turn the service into a traffic source against
 * a third party. Mount it after authentication.
 */
export const limitChecks = limitRequests(POST, [{ limiter: "CHECKS_PER_SUBJECT", key: bySubject }]);
