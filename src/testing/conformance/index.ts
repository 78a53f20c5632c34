/**
 * `sciencegate/testing/conformance`: the conformance suites another storage backend (a ledger, content
 * store, grant store, download job store or session state store of its own) must pass. They declare
 * vitest tests, so this entry needs vitest; the runner-free kits are in `sciencegate/testing`.
 */
export { describeContentStoreConformance } from "./content-store-conformance.js";
export { describeDownloadJobStoreConformance } from "./download-job-store-conformance.js";
export { describeGrantStoreConformance } from "./grant-store-conformance.js";
export { describeLedgerConformance } from "./ledger-conformance.js";
export { describeSessionStateStoreConformance } from "./session-state-store-conformance.js";
