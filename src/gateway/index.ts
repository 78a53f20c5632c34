export {
  createGatewayServer,
  type GatewayConnectOptions,
  type GatewayRuntime,
  type GatewayServer,
  type GatewayServerOptions,
} from "./create-gateway-server.js";
export { type OutOfBandApproval, shellQuote } from "./gateway-approval-text.js";
export {
  type ConversationState,
  type ConversationStateStore,
  MemoryConversationStateStore,
  PostgresConversationStateStore,
} from "./gateway-conversation-store.js";
export {
  createElicitationApproval,
  type ElicitationApprovalOptions,
  type ElicitationApprovalRuntime,
} from "./gateway-elicitation.js";
export { type GatewayHttpServer, type GatewayHttpStats, serveGatewayHttp } from "./gateway-http.js";
export {
  assertSafeBind,
  type BindRuleLabels,
  createHostCheck,
  GATEWAY_TOKEN_ENV,
  type GatewayAuthenticator,
  type GatewayPrincipal,
  type HttpRefusal,
  isLoopbackHost,
} from "./gateway-http-guard.js";
export { type GatewayHttpOptions, resolveGatewayHttpOptions } from "./gateway-http-options.js";
export {
  type GatewayApprovalHook,
  type GatewayCallContext,
  type GatewayRequestExtra,
  GatewaySession,
} from "./gateway-session.js";
export {
  CONVERSATION_HEADER,
  CONVERSATION_META_KEY,
  DEFAULT_CONVERSATION,
  type StatelessCaller,
} from "./gateway-stateless.js";
export type { GatewayStdioConnection, StdioRevision } from "./gateway-stdio.js";
export type { GatewayToolNaming } from "./gateway-tool-list.js";
export {
  checkOAuthResourceOptions,
  createOAuthResourceServer,
  DEFAULT_IDENTITY_ALGORITHMS,
  DEFAULT_IDENTITY_SCOPES,
  type IdentityAbility,
  type IdentityRefusal,
  isIdentityRefusal,
  type OAuthResourceOptions,
  type OAuthResourceServer,
  type VerifiedIdentity,
} from "./oauth-resource.js";
