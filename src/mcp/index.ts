export { callClientTool, listAllTools, serverUnavailable } from "./client-calls.js";
export { isProcessAlive } from "./process-tree.js";
export { createCappedFetch } from "./response-cap.js";
export { ServerPool, type ServerPoolOptions } from "./server-pool.js";
export { createSdkTransport } from "./transports.js";
export type {
  ContinuedRound,
  InputRound,
  PoolCallOptions,
  ProtocolEra,
  ServerState,
  ServerStatus,
  ToolServerPool,
  UpstreamRelay,
  UpstreamRequestContext,
} from "./types.js";
