/**
 * `sciencegate/testing`: test kits for an app's own tests, with any test runner (nothing here imports
 * one): a whole governance runtime (`createTestGovernance`), loopback fake providers, an in-memory
 * server pool, a manual clock, a reference LLM Wiki and a scripted chat model. The storage conformance suites need vitest: `sciencegate/testing/conformance`.
 */
export { createTestGovernance } from "./create-test-governance.js";
export {
  type FakeProviderServer,
  type FakeRoute,
  providerEnvFor,
  startFakeProviderServer,
} from "./fake-provider-server.js";
export { createInMemoryPool } from "./in-memory-pool.js";
export { flushMicrotasks, ManualClock } from "./manual-clock.js";
export { startReferenceWikiServer } from "./reference-wiki-server.js";
export {
  hasCalled,
  lastToolResult,
  ScriptedChatModel,
  type ScriptedReply,
  toolResultBody,
} from "./scripted-chat-model.js";
