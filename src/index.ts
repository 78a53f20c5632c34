/**
 * The public API of `sciencegate`: the entry points an app calls. Everything exported here is a promise
 * to users; adding is easy, removing is a breaking change. Building blocks for apps that compose their
 * own broker are in `sciencegate/governance`, downloads, PDF extraction and evidence review in
 * `sciencegate/artifacts`, the Science ADK in `sciencegate/adk`, the bundled MCP servers in
 * `sciencegate/servers` and test kits in `sciencegate/testing` (see ARCHITECTURE.md).
 */

export {
  createGovernedAgent,
  type FromMultiServerClientOptions,
  fromMultiServerMCPClient,
  type GovernanceMiddlewareOptions,
  type GovernedAgentOptions,
  type GovernedAgentRuntime,
  governanceMiddleware,
  prepareFixedToolTable,
} from "./adapters/index.js";
// The app-facing runtime is the runtime with the Science ADK on top (`science.toml` providers join it).
export {
  createGovernance,
  isToolError,
  type ScienceGovernance as Governance,
  type ScienceGovernanceOptions as GovernanceOptions,
  ToolError,
} from "./adk/index.js";
export {
  GOVERNANCE_ERROR_CODES,
  GovernanceError,
  type GovernanceErrorBody,
  type GovernanceErrorCode,
  isGovernanceError,
} from "./core/index.js";
export type { PermissionCard, PermissionDecision } from "./governance/permissions/index.js";
export {
  type ApprovalCardFormat,
  type ApprovalDecision,
  type ApprovalGateOptions,
  type ApprovalHitlRequest,
  type ApprovalHitlResponse,
  type ApprovalHook,
  type ApprovalInterruptValue,
  type ApprovalRequest,
  createApprovalGate,
  createGovernedToolNode,
  createGovernedToolsCondition,
  createModelNode,
  type GovernedState,
  GovernedStateAnnotation,
  type GovernedStateUpdate,
  type GovernedToolNodeOptions,
  type GovernedToolTask,
  governedToolsCondition,
  type ModelNodeOptions,
  type SessionIdResolver,
} from "./nodes/index.js";
