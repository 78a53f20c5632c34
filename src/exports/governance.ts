/**
 * `sciencegate/governance`: the building blocks behind `createGovernance`, for apps that compose their
 * own broker, stores or server pool (see ARCHITECTURE.md for how they fit together).
 */

export {
  createDownloadApproval,
  createMultiServerClientPool,
  type MultiServerClientLike,
} from "../adapters/index.js";
export { PostgresDownloadJobStore } from "../artifacts/index.js";
export {
  BUNDLED_SOURCES_SERVER_ID,
  defaultExtensionsConfigJson,
  type ExtensionsConfig,
  loadExtensionsConfig,
  type OAuthConfig,
  type ProtocolSetting,
  parseExtensionsConfig,
  type RoutingConfig,
  resolveConfigPath,
  type ServerConfig,
  type TransportKind,
  validateExtensionsConfig,
} from "../config/index.js";
export type {
  ArtifactCandidate,
  Citation,
  ContentScope,
  CrossReference,
  McpRecord,
  McpToolResult,
  UpstreamError,
  UpstreamErrorCode,
} from "../contract/index.js";
export { toolErrorResult } from "../contract/index.js";
export {
  type Clock,
  openPostgres,
  type PostgresDatabase,
  type PostgresOptions,
  systemClock,
  toErrorBody,
} from "../core/index.js";
export {
  type AuthorizationListOptions,
  type AuthorizationRecord,
  type ContentObject,
  type ContentRef,
  type ContentStore,
  checkStoreIntegrity,
  FileContentStore,
  type InvocationRecord,
  type Ledger,
  type LedgerActivityBucket,
  type LedgerObjects,
  type LedgerQuery,
  type LedgerSummary,
  MemoryContentStore,
  MemoryLedger,
  type MemoryLedgerOptions,
  PostgresLedger,
  type PostgresLedgerOptions,
  SqliteLedger,
  type SqliteLedgerOptions,
  type StoreIntegrityReport,
  withLedgerObjects,
} from "../governance/audit/index.js";
export {
  Broker,
  type BrokerOptions,
  type InvokeOutcome,
  type InvokeRequest,
  ResultCache,
} from "../governance/broker/index.js";
export {
  type CatalogSnapshot,
  type CatalogSource,
  type CatalogTool,
  inputSchemasCompatible,
  SourceCatalog,
  type SourceStatus,
} from "../governance/catalog/index.js";
export {
  builtinManifestDir,
  loadManifestDir,
  loadManifestFile,
  type SourceManifest,
  SourceRegistry,
  type ToolManifest,
  validateManifest,
} from "../governance/manifests/index.js";
export {
  type ApprovalMode,
  type AuthorizationDecision,
  type AuthorizationRequest,
  type Authorize,
  createAuthorizationRequest,
  type DecideResult,
  type Grant,
  type GrantStore,
  grantStorePath,
  type IsDangerous,
  MemoryGrantStore,
  MemorySessionStateStore,
  type PendingEndSource,
  type PendingPermission,
  type PermissionCard,
  type PermissionDecision,
  type PermissionDecisionSource,
  type PermissionEvaluation,
  type PermissionPolicy,
  type PermissionRisk,
  PermissionService,
  type PermissionServiceOptions,
  PostgresGrantStore,
  permissionDecisionSchema,
  type RecordedDecision,
  SessionSettings,
  type SessionSettingsOptions,
  type SessionStateEntry,
  type SessionStateStore,
  SqliteGrantStore,
} from "../governance/permissions/index.js";
export {
  PostgresRateLimiter,
  type PostgresRateLimiterOptions,
  type RateLimitAdmission,
  RateLimiter,
  type RateLimitGroupConfig,
} from "../governance/rate-limit/index.js";
export {
  type BeginAuthorizationOptions,
  beginAuthorization,
  type CredentialKey,
  type CredentialSummary,
  createLoopbackCallback,
  FileCredentialStore,
  type LoopbackCallback,
  MemoryCredentialStore,
  type OAuthCredentialStore,
  type PendingAuthorization,
  type PoolCallOptions,
  PostgresCredentialStore,
  ServerPool,
  type ServerPoolOptions,
  type ServerState,
  type ServerStatus,
  type StoredCredentials,
  type ToolServerPool,
  type UpstreamRelay,
  type UpstreamRequestContext,
} from "../mcp/index.js";
export {
  type ApprovalAction,
  type ApprovalCall,
  type ApprovalGateRuntime,
  type AuthorizationApproval,
  approvalResponseJsonSchema,
  createAuthorizationApproval,
  GovernedStructuredTool,
  type GovernedStructuredToolFields,
  type GovernedToolRunner,
  type HitlDecision,
  permissionDecisionJsonSchema,
} from "../nodes/index.js";
export { type GovernanceStorage, resolveDataDir } from "../runtime/index.js";
export { autoPromote, deferredToolsPromptSection, modelVisibleName } from "../visibility/index.js";
