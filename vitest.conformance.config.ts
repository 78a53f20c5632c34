import { defineConfig } from "vitest/config";
import { packageAliases } from "./vitest.shared.js";

/**
 * `npm run test:conformance`: the official MCP conformance suite's client scenarios against the server
 * pool (`*.conformance.test.ts`, several minutes; the suite's CLI runs on a Node.js 22 it installs once).
 */
export default defineConfig({
  resolve: { alias: packageAliases() },
  test: {
    include: ["test/conformance/**/*.conformance.test.ts"],
    testTimeout: 1_800_000,
    hookTimeout: 600_000,
    pool: "forks",
    globalSetup: ["test/temp-root.ts"],
    fileParallelism: false,
  },
});
