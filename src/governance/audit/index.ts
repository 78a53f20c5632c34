export { type ContentRef, type ContentStore, FileContentStore, MemoryContentStore } from "./content-store.js";
export type { AuthorizationRecord, InvocationRecord, Ledger, LedgerQuery, LedgerSummary } from "./ledger.js";
export { MemoryLedger } from "./memory-ledger.js";
export { SqliteLedger } from "./sqlite-ledger.js";
export { checkStoreIntegrity, type StoreIntegrityReport } from "./store-integrity.js";
