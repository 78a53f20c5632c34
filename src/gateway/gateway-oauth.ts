/**
 * The gateway's face of the OAuth resource server: each request's access token becomes its principal
 * (the token's subject, with whether it may answer approval cards), a refused token a 401 or 403 with
 * the challenge that names the protected resource metadata, which the gateway serves (see
 * ARCHITECTURE.md, "Identity").
 */
import type { ServerResponse } from "node:http";
import type { GatewayAuthenticator } from "./gateway-http-guard.js";
import {
  createOAuthResourceServer,
  isIdentityRefusal,
  type OAuthResourceOptions,
  type OAuthResourceServer,
} from "./oauth-resource.js";

/** The authenticator and metadata route of a gateway that is a resource server. */
export interface GatewayOAuth {
  server: OAuthResourceServer;
  authenticate: GatewayAuthenticator;
  /** Whether a path is the metadata document's (with or without the resource's path). */
  servesMetadata(path: string | undefined): boolean;
  sendMetadata(response: ServerResponse): void;
}

/**
 * @param options the resource server's options
 * @param url the gateway's own URL, the audience unless `options.audience` names the public one
 */
export function oauthAuthenticator(options: OAuthResourceOptions, url: string): GatewayOAuth {
  const server = createOAuthResourceServer(options, url);
  const paths = new Set([server.metadataPath, "/.well-known/oauth-protected-resource"]);
  return {
    server,
    async authenticate(request) {
      const identity = await server.authenticate(request.headers.authorization, "call");
      if (isIdentityRefusal(identity)) {
        return {
          status: identity.status,
          code: -32000,
          message: `${identity.status === 401 ? "Unauthorized" : "Forbidden"}: ${identity.description}`,
          headers: { "WWW-Authenticate": identity.challenge },
        };
      }
      // Sessions are bound to the token's subject and what it may do: another user's token never opens
      // them, and a token of the same user with fewer scopes gets a session of its own (404 on the old).
      return {
        id: `oauth:${identity.may.approve ? "approve" : "call"}:${identity.principal}`,
        user: identity.principal,
        mayApprove: identity.may.approve,
      };
    },
    servesMetadata: (path) => path !== undefined && paths.has(path),
    sendMetadata(response) {
      response.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "max-age=300" });
      response.end(JSON.stringify(server.metadata()));
    },
  };
}
