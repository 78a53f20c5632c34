import { defineConfig } from "vitest/config";
import { packageAliases } from "./vitest.shared.js";

/**
 * `npm run test:server`: apps served by the real LangGraph API dev server (`*.server.test.ts`; the
 * server takes about 20 s to start, so these stay out of the default suite).
 */
export default defineConfig({
  resolve: { alias: packageAliases() },
  test: {
    include: ["test/**/*.server.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: "forks",
    globalSetup: ["test/temp-root.ts"],
    fileParallelism: false,
  },
});
