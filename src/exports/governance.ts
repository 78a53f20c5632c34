/**
 * `sciencegate/governance`: the building blocks behind `createGovernance` (the `src/governance` folder):
 * the broker, the live catalog, manifests, the audit ledger and content store, grants and session
 * state and the permission hook, for apps that compose their own (see ARCHITECTURE.md). The shapes of a
 * governed result (`McpToolResult`) are in `sciencegate`.
 */

export {
  type AuthorizationRecord,
  type ContentStore,
  checkStoreIntegrity,
  FileContentStore,
  type InvocationRecord,
  type LedgerStore,
  MemoryContentStore,
  MemoryLedger,
  PostgresLedger,
  SqliteLedger,
} from "../governance/audit/index.js";
export { Broker, type InvokeRequest } from "../governance/broker/index.js";
export { SourceCatalog } from "../governance/catalog/index.js";
export { type SourceManifest, validateManifest } from "../governance/manifests/index.js";
export {
  type Authorize,
  type GrantStore,
  MemoryGrantStore,
  MemorySessionStateStore,
  PostgresGrantStore,
  type SessionStateStore,
  SqliteGrantStore,
} from "../governance/permissions/index.js";
