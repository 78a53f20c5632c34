/**
 * `sciencegate/governance`: the building blocks behind `createGovernance` (the `src/governance` folder):
 * the broker, the live catalog, manifests, the audit ledger and content store, grants and session
 * state, permissions, rate limits and quotas, for apps that compose their own (see ARCHITECTURE.md).
 */

// The broker's result shapes and the model-facing tool names belong with the broker.
export type { McpRecord, McpToolResult } from "../contract/index.js";
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
export {
  Broker,
  type BrokerOptions,
  type InvokeOutcome,
  type InvokeRequest,
} from "../governance/broker/index.js";
export { SourceCatalog } from "../governance/catalog/index.js";
export { type SourceManifest, type ToolManifest, validateManifest } from "../governance/manifests/index.js";
export {
  type AuthorizationRequest,
  type Authorize,
  type AuthorizeResult,
  type GrantStore,
  MemoryGrantStore,
  MemorySessionStateStore,
  type PermissionPolicy,
  PostgresGrantStore,
  type SessionStateStore,
  SqliteGrantStore,
} from "../governance/permissions/index.js";
export type { QuotaRule, RateLimitGroupConfig } from "../governance/rate-limit/index.js";
export { autoPromote, deferredToolsPromptSection, modelVisibleName } from "../visibility/index.js";
