/**
 * `sciencegate/gateway`: the governed MCP gateway for apps that embed it. One MCP server in front of
 * every configured server and source; each connection is its own governance session (see
 * ARCHITECTURE.md, "The governed MCP gateway"). `serveGatewayHttp` serves it over Streamable HTTP;
 * `sciencegate serve gateway` runs it on stdio, or with `--http` over HTTP.
 */

export {
  createElicitationApproval,
  createGatewayServer,
  createOAuthResourceServer,
  type GatewayApprovalHook,
  type GatewayAuthenticator,
  serveGatewayHttp,
} from "../gateway/index.js";
