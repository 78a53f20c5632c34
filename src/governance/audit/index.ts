export {
  type ContentObject,
  contentObject,
  jsonObject,
  jsonObjectAsIs,
  parseContentRef,
} from "./content-object.js";
export { type ContentRef, type ContentStore, FileContentStore, MemoryContentStore } from "./content-store.js";
export type {
  AuthorizationListOptions,
  AuthorizationRecord,
  InvocationRecord,
  LedgerActivityBucket,
  LedgerBatchOptions,
  LedgerObjects,
  LedgerQuery,
  LedgerReader,
  LedgerStore,
  LedgerSummary,
  LedgerWrite,
  LedgerWriteResult,
} from "./ledger.js";
export { LedgerContentStore, putObjectIn, stageObject, withLedgerObjects } from "./ledger-content-store.js";
export { LedgerSpool } from "./ledger-spool.js";
export { type HeldAuthorization, LedgerWriter, type LedgerWriterOptions } from "./ledger-writer.js";
export { MemoryLedger, type MemoryLedgerOptions } from "./memory-ledger.js";
export { PostgresLedger, type PostgresLedgerOptions } from "./postgres-ledger.js";
export { DEFAULT_MAX_INLINE_BYTES, SqliteLedger, type SqliteLedgerOptions } from "./sqlite-ledger.js";
export { checkStoreIntegrity, type StoreIntegrityReport } from "./store-integrity.js";
