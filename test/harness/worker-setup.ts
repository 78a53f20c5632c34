/**
 * Runs in every test worker before each file (vitest.config.ts `setupFiles`): the tracing SDK is
 * registered here, the same way in every worker, so that no file's branch depends on which files ran
 * before it in the same worker (see test/core/span-recorder.ts).
 */
import { registerTestTracing } from "../core/span-recorder.js";

registerTestTracing();
