/**
 * `sciencegate/testing`: test kits for apps and for other storage backends. The conformance suites
 * need vitest.
 */
export { describeContentStoreConformance } from "./content-store-conformance.js";
export {
  type DownloadJobStoreConformanceOptions,
  describeDownloadJobStoreConformance,
} from "./download-job-store-conformance.js";
export {
  type FakeProviderServer,
  type FakeProviderServerOptions,
  type FakeRoute,
  providerEnvFor,
  startFakeProviderServer,
} from "./fake-provider-server.js";
export { describeGrantStoreConformance } from "./grant-store-conformance.js";
export { createInMemoryPool, type InMemoryPoolOptions } from "./in-memory-pool.js";
export { describeLedgerConformance } from "./ledger-conformance.js";
export { flushMicrotasks, ManualClock } from "./manual-clock.js";
export {
  type ReferenceWiki,
  type ReferenceWikiOptions,
  startReferenceWikiServer,
} from "./reference-wiki-server.js";
export {
  describeSessionStateStoreConformance,
  type SessionStateStoreConformanceOptions,
} from "./session-state-store-conformance.js";
