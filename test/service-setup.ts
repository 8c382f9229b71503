import type { TestProject } from "vitest/node";
import { type ServiceInfo, startService, stopService } from "./local-service.ts";

declare module "vitest" {
  export interface ProvidedContext {
    service: ServiceInfo;
  }
}

/** One local service for a whole Node-side project (browser, verifier-cli); started once, stopped with SIGTERM. */
export default async function setup(project: TestProject) {
  const { info, child } = await startService();
  project.provide("service", info);
  return () => stopService(child);
}
