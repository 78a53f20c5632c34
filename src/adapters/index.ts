export {
  type ArtifactBuiltinsOptions,
  type ArtifactBuiltinsRuntime,
  type BuiltinCallIds,
  builtinAuthorizationRequest,
  createArtifactBuiltins,
  createBuiltinApproval,
} from "./artifact-builtins.js";
export {
  createGovernedAgent,
  type GovernedAgentOptions,
  type GovernedAgentRuntime,
} from "./create-governed-agent.js";
export { type FixedToolTableOptions, prepareFixedToolTable } from "./fixed-tool-table.js";
export { type FromMultiServerClientOptions, fromMultiServerMCPClient } from "./from-multi-server-client.js";
export { type GovernanceMiddlewareOptions, governanceMiddleware } from "./governance-middleware.js";
export { createMultiServerClientPool, type MultiServerClientLike } from "./multi-server-client-pool.js";
export {
  createPaperAcquisitionGraph,
  type PaperAcquisitionGraph,
  type PaperAcquisitionGraphOptions,
  type PaperAcquisitionRuntime,
} from "./paper-acquisition-graph.js";
export type {
  AcquiredPaper,
  AcquiredPaperStatus,
  PaperAcquisitionCandidate,
} from "./paper-acquisition-state.js";
