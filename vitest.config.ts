import { availableParallelism } from "node:os";
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
      "test/**/*.examples.test.ts",
      "test/**/*.conformance.test.ts",
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Vitest's default on 2 cores is one worker; the suite waits on child processes often enough that
    // two keep both cores busy.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Files of one worker share the module graph (langchain, LangGraph, the MCP SDK load once per worker,
    // not once per file): a test must not rely on module state another file left (tracing registers
    // its SDK once per process for this reason, test/core/span-recorder.ts).
    isolate: false,
    globalSetup: ["test/temp-root.ts"],
  },
});
