import { defineConfig } from "vitest/config";
import { packageAliases } from "./vitest.shared.js";

export default defineConfig({
  resolve: { alias: packageAliases() },
  test: {
    include: ["test/**/*.test.ts"],
    exclude: [
      "**/node_modules/**",
      "test/**/*.int.test.ts",
      "test/**/*.faults.test.ts",
      "test/**/*.package.test.ts",
      "test/**/*.server.test.ts",
      "test/**/*.replicas.test.ts",
      "test/**/*.browser.test.ts",
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    globalSetup: ["test/temp-root.ts"],
  },
});
