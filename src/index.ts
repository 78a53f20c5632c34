/**
 * The public API of `sciencegate`: the entry points an app calls. Everything exported here is a promise
 * to users; adding is easy, removing is a breaking change. The runtime's building blocks (broker,
 * catalog, manifests, stores) are in `sciencegate/governance`, downloads, PDF extraction and evidence
 * review in `sciencegate/artifacts`, the Science ADK extension in `sciencegate/adk`, the bundled MCP
 * servers in `sciencegate/servers` and test kits in `sciencegate/testing` (see ARCHITECTURE.md).
 */

export {
  createGovernedAgent,
  type FromMultiServerClientOptions,
  fromMultiServerMCPClient,
  type GovernanceMiddlewareOptions,
  type GovernedAgentOptions,
  governanceMiddleware,
  prepareFixedToolTable,
} from "./adapters/index.js";
export {
  GOVERNANCE_ERROR_CODES,
  GovernanceError,
  type GovernanceErrorBody,
  type GovernanceErrorCode,
  isGovernanceError,
} from "./core/index.js";
export type { PermissionCard, PermissionDecision } from "./governance/permissions/index.js";
export {
  type ApprovalGateOptions,
  type ApprovalHitlRequest,
  type ApprovalHitlResponse,
  type ApprovalHook,
  type ApprovalHookResult,
  type ApprovalRequest,
  createApprovalGate,
  createGovernedToolNode,
  createGovernedToolsCondition,
  createModelNode,
  type GovernedState,
  GovernedStateAnnotation,
  type GovernedToolNodeOptions,
  governedToolsCondition,
  type ModelNodeOptions,
  type SessionIdResolver,
} from "./nodes/index.js";
export {
  createGovernance,
  type Governance,
  type GovernanceExtension,
  type GovernanceForProcessOptions,
  type GovernanceOptions,
  governanceForProcess,
  type ProcessGovernance,
} from "./runtime/index.js";
