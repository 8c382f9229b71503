import { Hono } from "hono";
import type { UiEnv } from "./context.ts";

/** The onboarding page for a marketplace acquisition (spec 4.3 steps 9-10). */
export const onboardingRoutes = new Hono<UiEnv>();
