import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./workers/control/src/db/schema.ts",
  out: "./migrations",
});
