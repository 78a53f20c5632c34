/**
 * The public API of `sciencegate`. Everything exported here is a promise to users: adding is easy,
 * removing is a breaking change. Test kits live in `sciencegate/testing`, the bundled MCP servers in
 * `sciencegate/servers`.
 */

export { createGovernance, type Governance } from "./adapters/create-governance.js";
export { createGovernedAgent, type GovernedAgentOptions } from "./adapters/create-governed-agent.js";
export { createDownloadApproval } from "./adapters/download-approval.js";
export { prepareFixedToolTable } from "./adapters/fixed-tool-table.js";
export {
  type FromMultiServerClientOptions,
  fromMultiServerMCPClient,
} from "./adapters/from-multi-server-client.js";
export { type GovernanceMiddlewareOptions, governanceMiddleware } from "./adapters/governance-middleware.js";
export type { GovernanceOptions } from "./adapters/governance-options.js";
export {
  GovernedStructuredTool,
  type GovernedStructuredToolFields,
  type GovernedToolRunner,
} from "./adapters/governed-structured-tool.js";
export {
  createMultiServerClientPool,
  type MultiServerClientLike,
} from "./adapters/multi-server-client-pool.js";
export {
  createPaperAcquisitionGraph,
  type PaperAcquisitionGraph,
  type PaperAcquisitionGraphOptions,
  type PaperAcquisitionRuntime,
} from "./adapters/paper-acquisition-graph.js";

export type {
  AcquiredPaper,
  AcquiredPaperStatus,
  PaperAcquisitionCandidate,
} from "./adapters/paper-acquisition-state.js";
export type { CallTool, CallToolContext, CallToolOutcome } from "./adk/call-tool.js";
export { loadLocalTools } from "./adk/local-tools/load-local-tools.js";
export type { LocalTool } from "./adk/local-tools/local-tool.js";
export type { ProviderKind } from "./adk/science-providers.js";
export {
  loadScienceToml,
  parseScienceToml,
  type ScienceProject,
  type ScienceProvider,
} from "./adk/science-toml.js";
export { isToolError, ToolError } from "./adk/tool-error.js";
export { qualifiedToolName, resolveToolName } from "./adk/tool-resolver.js";
export {
  type ToolDeclaration,
  type ToolUseFailure,
  type ToolUseVerdict,
  toolUseVerified,
} from "./adk/tool-use-verified.js";
export { type ToolUseVerifiedOptions, withToolUseVerified } from "./adk/with-tool-use-verified.js";
export { loadWorkflowDeclarations } from "./adk/workflow-file.js";
export {
  type ArtifactDownloadProgressEvent,
  type ArtifactDownloadToolOptions,
  createArtifactDownloadTool,
} from "./artifacts/artifact-download-tool.js";
export type { ManifestLookup } from "./artifacts/download-candidate.js";
export type { DownloadFetch } from "./artifacts/download-fetch.js";
export {
  type DownloadJob,
  type DownloadJobError,
  type DownloadJobStatus,
  type DownloadJobStore,
  MemoryDownloadJobStore,
} from "./artifacts/download-job-store.js";
export { DownloadManager } from "./artifacts/download-manager.js";
export { downloadAuthorizationRequest } from "./artifacts/download-permission.js";
export { SqliteDownloadJobStore } from "./artifacts/download-sqlite-job-store.js";
export {
  DEFAULT_DOWNLOAD_MAX_BYTES,
  type DownloadApproval,
  type DownloadAuthorize,
  type DownloadManagerOptions,
  type DownloadPlan,
  type DownloadProgress,
  type DownloadRequest,
  type DownloadResult,
} from "./artifacts/download-types.js";
export type { Claim, Evidence } from "./artifacts/evidence-claims.js";
export {
  type ExtractPdfInput,
  type ExtractPdfOptions,
  type ExtractPdfResult,
  extractPdf,
} from "./artifacts/extract-pdf.js";
export {
  type EvidenceRuntime,
  type FullTextExtraction,
  fullTextExtractions,
} from "./artifacts/full-text-extractions.js";
export {
  createPaperExtractTool,
  PAPER_EXTRACT_TOOL_ID,
  type PaperExtractResult,
  type PaperExtractToolOptions,
  type TurnToolCallIds,
} from "./artifacts/paper-extract-tool.js";
export {
  extractDownloadedPaper,
  type PaperExtractionRequest,
  type PaperExtractionRuntime,
} from "./artifacts/paper-extraction.js";
export { DEFAULT_PDF_LIMITS, type PdfLimits } from "./artifacts/pdf-limits.js";
export type { PdfManifest, PdfManifestPage } from "./artifacts/pdf-manifest.js";
export {
  type EvidenceRejection,
  type EvidenceReview,
  type ReviewEvidenceOptions,
  type ReviewedClaim,
  type ReviewedEvidence,
  type ReviewedRecord,
  reviewEvidence,
} from "./artifacts/review-evidence.js";
export { resolveConfigPath } from "./config/config-path.js";
export { BUNDLED_SOURCES_SERVER_ID, defaultExtensionsConfigJson } from "./config/default-config.js";
export {
  loadExtensionsConfig,
  parseExtensionsConfig,
  validateExtensionsConfig,
} from "./config/extensions-config.js";
export type { ExtensionsConfig, RoutingConfig, ServerConfig, TransportKind } from "./config/types.js";
export { Broker, type BrokerOptions } from "./governance/broker.js";
export type {
  AuthorizationDecision,
  AuthorizationRequest,
  Authorize,
  InvokeOutcome,
  InvokeRequest,
} from "./governance/broker-types.js";
export { type Clock, systemClock } from "./governance/clock.js";
export {
  type ContentRef,
  type ContentStore,
  FileContentStore,
  MemoryContentStore,
} from "./governance/content-store.js";
export { resolveDataDir } from "./governance/data-dir.js";
export {
  GOVERNANCE_ERROR_CODES,
  GovernanceError,
  type GovernanceErrorBody,
  type GovernanceErrorCode,
  isGovernanceError,
  toErrorBody,
} from "./governance/errors.js";
export { type Grant, type GrantStore, MemoryGrantStore } from "./governance/grant-store.js";
export type {
  AuthorizationRecord,
  InvocationRecord,
  Ledger,
  LedgerQuery,
  LedgerSummary,
} from "./governance/ledger.js";
export {
  builtinManifestDir,
  loadManifestDir,
  loadManifestFile,
  validateManifest,
} from "./governance/manifest-loader.js";
export type { SourceManifest, ToolManifest } from "./governance/manifest-schema.js";
export { MemoryLedger } from "./governance/memory-ledger.js";
export type { PendingPermission } from "./governance/pending-permissions.js";
export { createAuthorizationRequest } from "./governance/permission-request.js";
export { PermissionService, type PermissionServiceOptions } from "./governance/permission-service.js";
export {
  type ApprovalMode,
  type IsDangerous,
  type PermissionCard,
  type PermissionDecision,
  type PermissionDecisionSource,
  type PermissionEvaluation,
  type PermissionPolicy,
  type PermissionRisk,
  permissionDecisionSchema,
} from "./governance/permission-types.js";
export { RateLimiter, type RateLimitGroupConfig } from "./governance/rate-limiter.js";
export type { DecideResult, PendingEndSource } from "./governance/recorded-decisions.js";
export { ResultCache } from "./governance/result-cache.js";
export type {
  ArtifactCandidate,
  Citation,
  ContentScope,
  CrossReference,
  McpRecord,
  McpToolResult,
} from "./governance/result-types.js";
export { inputSchemasCompatible } from "./governance/schema-compat.js";
export { SessionSettings } from "./governance/session-settings.js";
export { SourceCatalog } from "./governance/source-catalog.js";
export type {
  CatalogSnapshot,
  CatalogSource,
  CatalogTool,
  SourceStatus,
} from "./governance/source-catalog-types.js";
export { SourceRegistry } from "./governance/source-registry.js";
export { grantStorePath, SqliteGrantStore } from "./governance/sqlite-grant-store.js";
export { SqliteLedger } from "./governance/sqlite-ledger.js";
export { checkStoreIntegrity, type StoreIntegrityReport } from "./governance/store-integrity.js";
export { toolErrorResult, type UpstreamError, type UpstreamErrorCode } from "./governance/upstream-error.js";
export { ServerPool, type ServerPoolOptions } from "./mcp/server-pool.js";
export type { PoolCallOptions, ServerState, ServerStatus, ToolServerPool } from "./mcp/types.js";
export {
  type ApprovalGateOptions,
  type ApprovalGateRuntime,
  type ApprovalInterruptValue,
  type AuthorizationApproval,
  createApprovalGate,
  createAuthorizationApproval,
  permissionDecisionJsonSchema,
} from "./nodes/approval-gate.js";
export type { ApprovalDecision, ApprovalHook, ApprovalRequest } from "./nodes/approval-hook.js";
export {
  type GovernedState,
  GovernedStateAnnotation,
  type GovernedStateUpdate,
} from "./nodes/governed-state.js";
export { createGovernedToolNode, type GovernedToolNodeOptions } from "./nodes/governed-tool-node.js";
export {
  createGovernedToolsCondition,
  type GovernedToolTask,
  governedToolsCondition,
} from "./nodes/governed-tools-condition.js";
export { createModelNode, type ModelNodeOptions } from "./nodes/model-node.js";
export type { SessionIdResolver } from "./nodes/session-id.js";
export { modelVisibleName } from "./visibility/tool-names.js";
