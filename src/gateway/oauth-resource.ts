/**
 * The gateway and the console as OAuth 2.1 resource servers: a bearer access token is a JWT signed by
 * the identity provider's keys (its JWKS), issued by the configured issuer for this resource (its
 * audience), unexpired, in an allowed algorithm; its subject is the principal and its scopes say what
 * the principal may do (call tools, answer approval cards, administer). A refused token gets a
 * `WWW-Authenticate` challenge that names the protected resource metadata document (RFC 9728), from
 * which a client finds the authorization server (see ARCHITECTURE.md, "Identity").
 */
import { createRemoteJWKSet, customFetch, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import { type Clock, checkPrincipal, GovernanceError, systemClock } from "../core/index.js";
import { createCappedFetch } from "../mcp/index.js";

/** What a principal may do; each is granted by one scope of its token. */
export type IdentityAbility = "call" | "approve" | "administer";

/** The scope that grants each ability, unless configured otherwise. */
export const DEFAULT_IDENTITY_SCOPES: Readonly<Record<IdentityAbility, string>> = {
  call: "sciencegate:call",
  approve: "sciencegate:approve",
  administer: "sciencegate:admin",
};

/**
 * The signing algorithms accepted unless configured otherwise: asymmetric only (a symmetric key would
 * be the identity provider's secret, and `none` signs nothing).
 */
export const DEFAULT_IDENTITY_ALGORITHMS: readonly string[] = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];

/** Options of {@link createOAuthResourceServer}. */
export interface OAuthResourceOptions {
  /** The identity provider's issuer identifier: a token's `iss` must equal it exactly. */
  issuer: string;
  /**
   * The resource's identifier (its public URL, e.g. `https://gateway.example.org/mcp`): a token's `aud`
   * must contain it, so a token issued for another service is refused here.
   * @default the server's own URL, where it serves (`serveGatewayHttp`, `serveConsole`)
   */
  audience?: string | undefined;
  /**
   * Where the issuer publishes its signing keys.
   * @default the `jwks_uri` of the issuer's metadata (`/.well-known/oauth-authorization-server`, else
   *   `/.well-known/openid-configuration`), read once when the first token arrives
   */
  jwksUrl?: string | undefined;
  /** The accepted signing algorithms (`alg` header). @default the asymmetric signatures RS256/384/512, PS256/384/512, ES256/384/512 and EdDSA */
  algorithms?: readonly string[] | undefined;
  /** The scope names of each ability. @default {@link DEFAULT_IDENTITY_SCOPES} */
  scopes?: Partial<Record<IdentityAbility, string>> | undefined;
  /** The claim that names the principal. @default "sub" */
  principalClaim?: string | undefined;
  /** Seconds of clock skew allowed on `exp` and `nbf`. @default 30 */
  clockToleranceSeconds?: number | undefined;
  /** The clock tokens are checked against. @default the system clock */
  clock?: Clock | undefined;
  /**
   * Reads the issuer's metadata and keys (loopback tests use the global one; an app may pass a proxy's),
   * each answer under `UNCAPPED_REQUEST_MAX_BYTES`. @default `globalThis.fetch`
   */
  fetch?: typeof globalThis.fetch | undefined;
}

/** A verified token: who it names and what it may do. */
export interface VerifiedIdentity {
  /** The principal (the token's subject, checked by `checkPrincipal`). */
  principal: string;
  /** The token's scopes. */
  scopes: readonly string[];
  /** The abilities its scopes grant. */
  may: Readonly<Record<IdentityAbility, boolean>>;
}

/** Why a request was refused: the HTTP status and the challenge to send. */
export interface IdentityRefusal {
  status: 401 | 403;
  /** `invalid_token`, `insufficient_scope`, or absent for a request without a token. */
  error?: "invalid_token" | "insufficient_scope" | undefined;
  /** A short reason, safe to show the client (no token content). */
  description: string;
  /** The `WWW-Authenticate` header value. */
  challenge: string;
}

/** The resource server of one resource. */
export interface OAuthResourceServer {
  /** The resource's identifier (the audience tokens must carry). */
  readonly resource: string;
  /** The URL of the protected resource metadata document (RFC 9728). */
  readonly metadataUrl: string;
  /** The path the metadata is served at on the resource's host. */
  readonly metadataPath: string;
  /** The protected resource metadata document. */
  metadata(): Record<string, unknown>;
  /**
   * Checks the `Authorization` header of a request.
   * @param authorization the header's value
   * @param needs the ability the request needs (`call` for the gateway, `administer` for the console)
   * @returns the identity, or the refusal to send
   */
  authenticate(
    authorization: string | undefined,
    needs: IdentityAbility,
  ): Promise<VerifiedIdentity | IdentityRefusal>;
}

/**
 * Checks the options of a resource server before anything listens.
 * @throws GovernanceError `INVALID_CONFIG` for an issuer, audience or JWKS URL that is not an http(s)
 *   URL, an empty or symmetric or `none` algorithm list, or a blank scope name
 */
export function checkOAuthResourceOptions(options: OAuthResourceOptions): void {
  httpUrl(options.issuer, "issuer");
  if (options.audience !== undefined) httpUrl(options.audience, "audience");
  if (options.jwksUrl !== undefined) httpUrl(options.jwksUrl, "jwksUrl");
  const algorithms = options.algorithms ?? DEFAULT_IDENTITY_ALGORITHMS;
  if (algorithms.length === 0 || algorithms.some((alg) => !DEFAULT_IDENTITY_ALGORITHMS.includes(alg))) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `Token algorithms must be asymmetric signatures (${DEFAULT_IDENTITY_ALGORITHMS.join(", ")}); got ${algorithms.join(", ") || "none"}.`,
      { data: { field: "algorithms" } },
    );
  }
  for (const [ability, scope] of Object.entries(options.scopes ?? {})) {
    if (typeof scope !== "string" || !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope)) {
      throw new GovernanceError("INVALID_CONFIG", `The scope of '${ability}' must be one scope token.`, {
        data: { field: "scopes", ability },
      });
    }
  }
}

/**
 * Creates the resource server of one resource.
 * @param options issuer, audience, keys, algorithms, scope names
 * @param resource the resource's identifier when `options.audience` is absent (the server's own URL)
 * @returns the verifier and the metadata of the resource
 * @throws GovernanceError `INVALID_CONFIG` for options that `checkOAuthResourceOptions` refuses
 * @example
 * const oauth = createOAuthResourceServer({ issuer: "https://id.example.org", audience: "https://gw.example.org/mcp" });
 * const who = await oauth.authenticate(request.headers.authorization, "call");
 */
export function createOAuthResourceServer(
  options: OAuthResourceOptions,
  resource?: string,
): OAuthResourceServer {
  checkOAuthResourceOptions(options);
  const audience = options.audience ?? resource;
  if (audience === undefined) {
    throw new GovernanceError("INVALID_CONFIG", "The resource server needs its audience (its public URL).", {
      data: { field: "audience" },
    });
  }
  const resourceUrl = httpUrl(audience, "audience");
  const scopes = { ...DEFAULT_IDENTITY_SCOPES, ...options.scopes };
  const algorithms = [...(options.algorithms ?? DEFAULT_IDENTITY_ALGORITHMS)];
  const clock = options.clock ?? systemClock;
  // The issuer's metadata and keys are read under a bound, like every answer of a third party.
  const capped = createCappedFetch(options.fetch ?? ((url, init) => globalThis.fetch(url, init)));
  const doFetch = ((url: string | URL, init?: RequestInit) => capped(url, init)) as typeof globalThis.fetch;
  const claim = options.principalClaim ?? "sub";
  // RFC 9728 §3.1: the well-known segment goes between the host and the resource's path.
  const path = resourceUrl.pathname === "/" ? "" : resourceUrl.pathname.replace(/\/$/, "");
  const metadataPath = `/.well-known/oauth-protected-resource${path}`;
  const metadataUrl = `${resourceUrl.origin}${metadataPath}`;
  let keys: Promise<JWTVerifyGetKey> | undefined;

  const keySet = () => {
    keys ??= (async () => {
      const url = options.jwksUrl ?? (await discoverJwksUri(options.issuer, doFetch));
      return createRemoteJWKSet(new URL(url), { [customFetch]: doFetch, timeoutDuration: 10_000 });
    })();
    // A failed discovery is tried again on the next token, not remembered.
    keys.catch(() => {
      keys = undefined;
    });
    return keys;
  };

  const challenge = (error?: string, description?: string, scope?: string) =>
    [
      `Bearer resource_metadata="${metadataUrl}"`,
      ...(error ? [`error="${error}"`] : []),
      ...(error && description ? [`error_description="${description.replaceAll('"', "'")}"`] : []),
      ...(scope ? [`scope="${scope}"`] : []),
    ].join(", ");
  const refuse = (
    status: 401 | 403,
    error: IdentityRefusal["error"],
    description: string,
    scope?: string,
  ): IdentityRefusal => ({ status, error, description, challenge: challenge(error, description, scope) });

  return {
    resource: audience,
    metadataUrl,
    metadataPath,
    metadata: () => ({
      resource: audience,
      authorization_servers: [options.issuer],
      scopes_supported: [scopes.call, scopes.approve, scopes.administer],
      bearer_methods_supported: ["header"],
      resource_name: "Sciencegate",
    }),
    async authenticate(authorization, needs) {
      const token = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(authorization ?? "")?.[1];
      if (token === undefined) {
        return authorization
          ? refuse(401, "invalid_token", "send Authorization: Bearer <access token>")
          : refuse(401, undefined, "an access token is required", scopes[needs]);
      }
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, await keySet(), {
          issuer: options.issuer,
          audience,
          algorithms,
          clockTolerance: options.clockToleranceSeconds ?? 30,
          currentDate: new Date(clock.now()),
          requiredClaims: ["exp", claim],
        }));
      } catch (error) {
        return refuse(401, "invalid_token", tokenProblem(error));
      }
      let principal: string | undefined;
      try {
        principal = checkPrincipal(payload[claim], `token's ${claim} claim`);
      } catch {
        principal = undefined;
      }
      if (principal === undefined)
        return refuse(401, "invalid_token", `the token's ${claim} is not a principal`);
      const granted = scopesOf(payload);
      const may = {
        call: granted.includes(scopes.call),
        approve: granted.includes(scopes.approve),
        administer: granted.includes(scopes.administer),
      };
      if (!may[needs]) {
        return refuse(403, "insufficient_scope", `the token lacks the scope ${scopes[needs]}`, scopes[needs]);
      }
      return { principal, scopes: granted, may };
    },
  };
}

/**
 * Whether an answer of `authenticate` is a refusal.
 * @param value the answer
 */
export function isIdentityRefusal(value: VerifiedIdentity | IdentityRefusal): value is IdentityRefusal {
  return "challenge" in value;
}

/** `scope` (a space-separated string, RFC 9068) or `scp` (an array, some providers). */
function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === "string") return payload.scope.split(" ").filter(Boolean);
  if (Array.isArray(payload.scp)) return payload.scp.filter((one): one is string => typeof one === "string");
  return [];
}

/** A reason a client may be told: which check failed, never the token's content. */
function tokenProblem(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return "the token has expired";
    case "ERR_JWT_CLAIM_VALIDATION_FAILED": {
      const claim = (error as { claim?: unknown }).claim;
      return claim === "aud"
        ? "the token is not for this resource"
        : claim === "iss"
          ? "the token is not from the trusted issuer"
          : `the token's ${String(claim)} claim is not valid`;
    }
    case "ERR_JOSE_ALG_NOT_ALLOWED":
      return "the token's signing algorithm is not accepted";
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
    case "ERR_JWKS_NO_MATCHING_KEY":
      return "the token's signature does not verify with the issuer's keys";
    default:
      return "the token is not a valid access token";
  }
}

/** The issuer's `jwks_uri` from its OAuth (RFC 8414) or OpenID metadata. */
async function discoverJwksUri(issuer: string, doFetch: typeof globalThis.fetch): Promise<string> {
  const base = issuer.replace(/\/$/, "");
  const url = new URL(issuer);
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "");
  const candidates = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${base}/.well-known/openid-configuration`,
  ];
  for (const candidate of candidates) {
    try {
      const response = await doFetch(candidate, { signal: AbortSignal.timeout(10_000), redirect: "error" });
      if (!response.ok) continue;
      const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
      // The metadata must be the issuer's own (RFC 8414 §3.3), or its keys are someone else's.
      if (metadata.issuer !== issuer || typeof metadata.jwks_uri !== "string") continue;
      return httpUrl(metadata.jwks_uri, "jwks_uri").href;
    } catch {
      // The next candidate, then the error below.
    }
  }
  throw new GovernanceError(
    "UPSTREAM_UNAVAILABLE",
    `The issuer ${issuer} publishes no metadata with its jwks_uri; give the JWKS URL explicitly.`,
    { data: { field: "jwksUrl" } },
  );
}

function httpUrl(value: string, field: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new GovernanceError("INVALID_CONFIG", `The ${field} '${value}' is not an http(s) URL.`, {
      data: { field },
    });
  }
  return url;
}
