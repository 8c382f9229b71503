import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: ["./workers/control/src/db/schema.ts", "./workers/control/src/db/acquisitions-schema.ts"],
  out: "./migrations",
});
