import { defineConfig } from "vitest/config";
import { packageAliases } from "./vitest.shared.js";

/**
 * `npm run test:examples`: the approval examples run as a user runs them (`npx tsx <file>`), each in
 * its own Node process with the bundled sources as stdio children (`*.examples.test.ts`, about 1 min).
 */
export default defineConfig({
  resolve: { alias: packageAliases() },
  test: {
    include: ["test/examples/**/*.examples.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: "forks",
    globalSetup: ["test/temp-root.ts"],
  },
});
