import { defineConfig } from "vitest/config";
import { packageAliases } from "./vitest.shared.js";

/**
 * `npm run test:replicas`: real replica processes on one PostgreSQL (`*.replicas.test.ts`): shared
 * rate limits, and approvals and interrupted threads moving between replicas; about two minutes.
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
