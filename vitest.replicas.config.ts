import { defineConfig } from "vitest/config";
import { packageAliases } from "./vitest.shared.js";

/**
 * `npm run test:replicas`: shared rate limits with real replica processes on one PostgreSQL
 * (`*.replicas.test.ts`), about two minutes.
 */
export default defineConfig({
  resolve: { alias: packageAliases() },
  test: {
    include: ["test/**/*.replicas.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: "forks",
    globalSetup: ["test/temp-root.ts"],
    fileParallelism: false,
  },
});
