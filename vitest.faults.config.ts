import { defineConfig } from "vitest/config";

/** `npm run test:faults`: the slow reliability scenarios (`*.faults.test.ts`), one file at a time. */
export default defineConfig({
  test: {
    include: ["test/reliability/**/*.faults.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: "forks",
    fileParallelism: false,
  },
});
