import { defineConfig } from "vitest/config";
import { packageAliases } from "./vitest.shared.js";

/**
 * `npm run test:package`: packs the repository and checks the tarball from a fresh app
 * (`*.package.test.ts`; an npm pack and an npm install, a few minutes).
 */
export default defineConfig({
  resolve: { alias: packageAliases() },
  test: {
    include: ["test/packaging/**/*.package.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: "forks",
    globalSetup: ["test/temp-root.ts"],
    fileParallelism: false,
  },
});
