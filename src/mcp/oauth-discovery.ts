/**
 * Which revision's authorization discovery a protected MCP server speaks, and the 2025-03-26 one the
 * SDK does not do (ARCHITECTURE.md "Protected servers").
 *
 * Since 2025-06-18 a server names its authorization server in protected resource metadata, and the
 * authorization server's metadata must name, as its `issuer`, the very URL it was looked up under: the
 * SDK checks that and refuses a mismatch. The 2025-03-26 revision had no protected resource metadata:
 * the MCP server's origin is the authorization base URL, its metadata is read from
 * `<origin>/.well-known/oauth-authorization-server`, and without one the endpoints are `/authorize`,
 * `/token` and `/register` on that origin. Such a document may name an issuer under a path of that
 * origin; it is accepted only when the issuer stays on the MCP server's origin, so a server cannot
 * claim another authorization server's identity (and the credentials bound to it).
 */
import {
  extractWWWAuthenticateParams,
  type FetchLike,
  IssuerMismatchError,
  type OAuthDiscoveryState,
} from "@modelcontextprotocol/client";
import { OAuthMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";

/** The revision whose discovery this file adds, sent as `MCP-Protocol-Version` while discovering. */
const LEGACY_REVISION = "2025-03-26";

/** What an unauthenticated request learns: the server's `WWW-Authenticate` challenge, if it sends one. */
export interface UnauthenticatedChallenge {
  resourceMetadataUrl?: URL | undefined;
  scope?: string | undefined;
}

/**
 * Sends an unauthenticated `initialize` and reads the challenge of a 401 or 403.
 * @param serverUrl the MCP endpoint
 * @param fetchFn sends the request
 * @returns the challenge's `resource_metadata` and `scope`, empty when the server sent none or failed
 */
export async function unauthenticatedChallenge(
  serverUrl: string,
  fetchFn: FetchLike = fetch,
): Promise<UnauthenticatedChallenge> {
  try {
    const response = await fetchFn(serverUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "sciencegate", version: "0" },
        },
      }),
    });
    await response.body?.cancel().catch(() => undefined);
    if (response.status !== 401 && response.status !== 403) return {};
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
    return { resourceMetadataUrl, scope };
  } catch {
    // Discovery goes on from the well-known locations.
    return {};
  }
}

/**
 * The discovery state of a server that speaks the 2025-03-26 revision's authorization: no protected
 * resource metadata at either well-known location, none named by its challenge. Undefined for any
 * other server, whose discovery the SDK does with its issuer check.
 * @param serverUrl the MCP endpoint
 * @param fetchFn sends the requests
 * @param challenge the server's challenge when the caller has read it already
 * @returns the origin as authorization server, with its metadata when it publishes some
 * @throws IssuerMismatchError when the origin's metadata names an issuer on another origin
 */
export async function legacyDiscoveryState(
  serverUrl: string,
  fetchFn: FetchLike = fetch,
  challenge?: UnauthenticatedChallenge,
): Promise<OAuthDiscoveryState | undefined> {
  const server = new URL(serverUrl);
  const path = server.pathname.replace(/\/$/, "");
  const resourceMetadata = [
    ...(path === "" ? [] : [new URL(`/.well-known/oauth-protected-resource${path}`, server.origin)]),
    new URL("/.well-known/oauth-protected-resource", server.origin),
  ];
  for (const url of resourceMetadata) {
    // Anything but a plain 404 (metadata, an error, a redirect) is not the old revision's silence.
    if ((await status(fetchFn, url)) !== 404) return undefined;
  }
  const { resourceMetadataUrl } = challenge ?? (await unauthenticatedChallenge(serverUrl, fetchFn));
  if (resourceMetadataUrl !== undefined) return undefined;
  const base = new URL("/", server.origin);
  const response = await fetchFn(new URL("/.well-known/oauth-authorization-server", base), {
    headers: { accept: "application/json", "mcp-protocol-version": LEGACY_REVISION },
  });
  if (response.status === 404) {
    await response.body?.cancel().catch(() => undefined);
    return { authorizationServerUrl: base.href };
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  const metadata = OAuthMetadataSchema.parse(await response.json());
  let issuerOrigin: string | undefined;
  try {
    issuerOrigin = new URL(metadata.issuer).origin;
  } catch {
    issuerOrigin = undefined;
  }
  if (issuerOrigin !== base.origin) throw new IssuerMismatchError("metadata", base.href, metadata.issuer);
  return { authorizationServerUrl: base.href, authorizationServerMetadata: metadata };
}

async function status(fetchFn: FetchLike, url: URL): Promise<number> {
  const response = await fetchFn(url, {
    headers: { accept: "application/json", "mcp-protocol-version": LEGACY_REVISION },
  });
  await response.body?.cancel().catch(() => undefined);
  return response.status;
}
