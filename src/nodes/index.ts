export {
  type ApprovalCall,
  type ApprovalGateOptions,
  type ApprovalGateRuntime,
  type AuthorizationApproval,
  createApprovalGate,
  createAuthorizationApproval,
  permissionDecisionJsonSchema,
} from "./approval-gate.js";
export type { ApprovalHook, ApprovalHookResult, ApprovalRequest } from "./approval-hook.js";
export { type ApprovalHookOption, enforcingRuntime, resolveApprovalHook } from "./default-approval.js";
export {
  executeGovernedToolCall,
  type GovernedRuntime,
  type ToolCallContext,
  type ToolCallLike,
} from "./execute-tool-call.js";
export { createGovernedRunner, type PrincipalResolver, type SessionIdResolver } from "./governed-runner.js";
export {
  type GovernedState,
  GovernedStateAnnotation,
  type GovernedStateUpdate,
  PromotionStateSchema,
} from "./governed-state.js";
export {
  GovernedStructuredTool,
  type GovernedStructuredToolFields,
  type GovernedToolRunner,
  governedTools,
} from "./governed-tool.js";
export { createGovernedToolNode, type GovernedToolNodeOptions } from "./governed-tool-node.js";
export {
  createGovernedToolsCondition,
  GOVERNED_TOOLS_NODE,
  type GovernedToolTask,
  governedToolsCondition,
} from "./governed-tools-condition.js";
export {
  type ApprovalAction,
  type ApprovalCardFormat,
  type ApprovalHitlRequest,
  type ApprovalHitlResponse,
  type ApprovalInterruptValue,
  approvalResponseJsonSchema,
  type HitlActionRequest,
  type HitlDecision,
  type HitlDecisionType,
  type HitlReviewConfig,
} from "./hitl-protocol.js";
export { createModelNode, type ModelNodeOptions } from "./model-node.js";
export { prepareModelTurn, runStart } from "./model-turn.js";
export { inert as inertText } from "./tool-message-text.js";
export { parseUpstreamAnswer } from "./upstream-input.js";
