import { defineConfig } from "vitest/config";
import { packageAliases } from "./vitest.shared.js";

/**
 * `npm run test:browser`: the console in a real headless Chromium (`*.browser.test.ts`), driven by
 * playwright-core over a data directory the offline demo produced. Screenshots go to test-output/console/.
 */
export default defineConfig({
  resolve: { alias: packageAliases() },
  test: {
    include: ["test/**/*.browser.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: "forks",
    globalSetup: ["test/temp-root.ts"],
    fileParallelism: false,
  },
});
