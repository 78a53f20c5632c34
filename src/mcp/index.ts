export { callClientTool, listAllTools, serverUnavailable } from "./client-calls.js";
export {
  type BeginAuthorizationOptions,
  beginAuthorization,
  createLoopbackCallback,
  type LoopbackCallback,
  type PendingAuthorization,
  waitForCallback,
} from "./oauth-authorize.js";
export {
  type CredentialKey,
  type CredentialSummary,
  DEFAULT_PRINCIPAL,
  FileCredentialStore,
  MemoryCredentialStore,
  type OAuthCredentialStore,
  PostgresCredentialStore,
  type StoredCredentials,
} from "./oauth-credential-store.js";
export { createOAuthProvider, type OAuthProviderOptions } from "./oauth-provider.js";
export { isProcessAlive } from "./process-tree.js";
export { createCappedFetch } from "./response-cap.js";
export { ServerPool, type ServerPoolOptions } from "./server-pool.js";
export { createSdkTransport } from "./transports.js";
export type {
  ContinuedRound,
  InputRound,
  PoolCallOptions,
  PoolRequestOptions,
  ProtocolEra,
  ServerState,
  ServerStatus,
  SurfaceMethod,
  SurfaceNotification,
  ToolServerPool,
  UpstreamRelay,
  UpstreamRequestContext,
} from "./types.js";
