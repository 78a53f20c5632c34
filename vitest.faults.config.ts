import { defineConfig } from "vitest/config";
import { packageAliases } from "./vitest.shared.js";

/** `npm run test:faults`: the slow reliability scenarios (`*.faults.test.ts`), one file at a time. */
export default defineConfig({
  resolve: { alias: packageAliases() },
  test: {
    include: ["test/reliability/**/*.faults.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: "forks",
    globalSetup: ["test/temp-root.ts"],
    fileParallelism: false,
  },
});
