/**
 * The client under test of the official MCP conformance suite (`conformance client --command ...`):
 * Sciencegate's server pool, with its OAuth client, doing what a user of the library does. The runner
 * starts a scenario's mock server and runs `<command> <serverUrl>` with the scenario's name (and, for
 * some auth scenarios, credentials) in the environment; exit 0 means the client did its part.
 *
 * For a server that wants authorization, it does what `sciencegate auth <server>` does (the person's
 * browser is a fetch that follows the authorization server's redirect back to the loopback callback),
 * with the scope the refusal named, then runs the work again on a fresh pool, as the user would.
 */
import type { OAuthConfig, ServerConfig } from "../../src/config/types.js";
import { isGovernanceError } from "../../src/core/index.js";
import {
  beginAuthorization,
  createLoopbackCallback,
  MemoryCredentialStore,
  ServerPool,
} from "../../src/mcp/index.js";
import { createOAuthProvider } from "../../src/mcp/oauth-provider.js";

const serverUrl = process.argv.at(-1) ?? "";
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as Record<string, string>;
const SECRET_ENV = "CONFORMANCE_CLIENT_SECRET";
const KEY_ENV = "CONFORMANCE_CLIENT_KEY";
const ID_TOKEN_ENV = "CONFORMANCE_IDP_ID_TOKEN";
const env = {
  [SECRET_ENV]: context.client_secret,
  [KEY_ENV]: context.private_key_pem,
  [ID_TOKEN_ENV]: context.idp_id_token,
};
/** How many times a person is sent to authorize before the client gives up. */
const MAX_AUTHORIZATIONS = 3;

const log = (line: string) => process.stderr.write(`[pool-client] ${line}\n`);

/** The `oauth` block a user would write for this scenario's server. */
function oauthSettings(): OAuthConfig | undefined {
  switch (scenario) {
    case "auth/pre-registration":
      return { grant: "authorization_code", clientId: context.client_id ?? "", clientSecretEnv: SECRET_ENV };
    case "auth/client-credentials-basic":
      return { grant: "client_credentials", clientId: context.client_id ?? "", clientSecretEnv: SECRET_ENV };
    case "auth/client-credentials-jwt":
      return {
        grant: "client_credentials",
        clientId: context.client_id ?? "",
        privateKeyEnv: KEY_ENV,
        ...(context.signing_algorithm === undefined ? {} : { signingAlgorithm: context.signing_algorithm }),
      };
    case "auth/cross-app-access-complete-flow":
      // The person signed in at the enterprise identity provider: the app holds their ID token. The
      // scenario's identity provider publishes incomplete OpenID metadata, so its token endpoint is named.
      return {
        grant: "cross_app_access",
        clientId: context.client_id ?? "",
        clientSecretEnv: SECRET_ENV,
        idp: {
          issuer: context.idp_issuer ?? "",
          tokenEndpoint: context.idp_token_endpoint ?? "",
          clientId: context.idp_client_id ?? "",
          idTokenEnv: ID_TOKEN_ENV,
        },
      };
    case "auth/basic-cimd":
      return {
        grant: "authorization_code",
        clientMetadataUrl: "https://conformance-test.local/client-metadata.json",
      };
    default:
      return undefined;
  }
}

const oauth = oauthSettings();
const server: ServerConfig = {
  id: "target",
  transport: "http",
  url: serverUrl,
  args: [],
  env: {},
  headers: {},
  enabled: true,
  tools: {},
  ...(oauth === undefined ? {} : { oauth }),
};
const store = new MemoryCredentialStore();

/** The work of the scenario on one pool. */
async function work(pool: ServerPool): Promise<void> {
  const tools = await pool.listTools("target");
  log(`${scenario}: tools ${tools.map((tool) => tool.name).join(",")}`);
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await pool.callTool("target", name, args, {
      timeoutMs: 20_000,
      relay: {
        // The person accepts the form as offered: the pool fills in the schema's defaults.
        elicit: () => ({ action: "accept", content: {} }),
      },
    });
    log(`${name} -> ${JSON.stringify(result.content).slice(0, 200)}`);
  };
  if (tools.some((tool) => tool.name === "add_numbers")) await call("add_numbers", { a: 5, b: 3 });
  for (const tool of tools.filter((t) => t.name !== "add_numbers")) await call(tool.name, {});
}

/** What `sciencegate auth target [--scope S]` does, with a browser that signs in at once. */
async function authorize(scope: string | undefined): Promise<void> {
  const callback = await createLoopbackCallback();
  try {
    const begun = await beginAuthorization({ server, store, redirectUri: callback.redirectUri, scope, env });
    if (begun.status === "authorized") return;
    log(`authorize: scope=${begun.pending.url.searchParams.get("scope") ?? "(none)"}`);
    const page = await fetch(begun.pending.url, { redirect: "manual" });
    await page.body?.cancel();
    const location = page.headers.get("location");
    if (location === null) throw new Error(`the authorization page did not redirect (${page.status})`);
    const back = await fetch(new URL(location, begun.pending.url));
    await back.body?.cancel();
    await begun.pending.complete(await callback.received);
  } finally {
    await callback.close();
  }
}

let exit = 0;
for (let authorizations = 0; ; authorizations++) {
  const pool = new ServerPool([server], {
    authorization: (config) => createOAuthProvider({ server: config, store, env }),
  });
  try {
    await work(pool);
    break;
  } catch (error) {
    const wantsAuthorization = isGovernanceError(error) && error.code === "UNAUTHORIZED";
    log(`${wantsAuthorization ? "unauthorized" : "failed"}: ${String(error)}`);
    if (!wantsAuthorization || authorizations >= MAX_AUTHORIZATIONS) {
      exit = 1;
      break;
    }
    const data = (error.data ?? {}) as { scope?: string };
    await authorize(data.scope).catch((failure: unknown) => {
      log(`authorization failed: ${String(failure)}`);
      exit = 1;
    });
    if (exit !== 0) break;
  } finally {
    await pool.close();
  }
}
process.exit(exit);
