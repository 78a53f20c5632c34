/**
 * The public API of `sciencegate`: the entry points an app calls, the options it passes them, and the
 * shapes a governed tool answers with (a result's `McpToolResult`, an error's `GovernanceErrorBody`).
 * Everything exported here is a promise to users; adding is easy, removing is a breaking change. The
 * runtime's building blocks (broker, catalog, manifests, stores) are in `sciencegate/governance`,
 * downloads, PDF extraction and evidence review in `sciencegate/artifacts`, the Science ADK extension in
 * `sciencegate/adk`, the bundled MCP servers in `sciencegate/servers` and test kits in
 * `sciencegate/testing` (see ARCHITECTURE.md).
 */

export {
  createGovernedAgent,
  createPaperAcquisitionGraph,
  fromMultiServerMCPClient,
  type GovernanceMiddlewareOptions,
  type GovernedAgentOptions,
  governanceMiddleware,
  prepareFixedToolTable,
} from "./adapters/index.js";
export type { McpRecord, McpToolResult } from "./contract/index.js";
export {
  GovernanceError,
  type GovernanceErrorBody,
  type GovernanceErrorCode,
  isGovernanceError,
} from "./core/index.js";
export type { PermissionCard, PermissionDecision } from "./governance/permissions/index.js";
export {
  type ApprovalHitlRequest,
  type ApprovalHitlResponse,
  type ApprovalHook,
  createApprovalGate,
  createGovernedToolNode,
  createGovernedToolsCondition,
  createModelNode,
  GovernedStateAnnotation,
  type GovernedToolNodeOptions,
  governedToolsCondition,
  type ModelNodeOptions,
} from "./nodes/index.js";
export {
  createGovernance,
  type Governance,
  type GovernanceExtension,
  type GovernanceOptions,
  governanceForProcess,
} from "./runtime/index.js";
export { autoPromote, deferredToolsPromptSection } from "./visibility/index.js";
