/**
 * The identity flags `sciencegate serve gateway --http` and `sciencegate console` share: the OAuth
 * issuer whose access tokens they accept, the audience (their public URL), the issuer's JWKS URL and
 * the scope names of each ability (see ARCHITECTURE.md, "Identity").
 */
import { GovernanceError } from "../core/index.js";
import {
  checkOAuthResourceOptions,
  type IdentityAbility,
  type OAuthResourceOptions,
} from "../gateway/index.js";

/** The flags as parsed. */
export interface OAuthFlags {
  /** `--oauth-issuer URL` */
  issuer?: string | undefined;
  /** `--oauth-audience URL` */
  audience?: string | undefined;
  /** `--oauth-jwks-url URL` */
  jwksUrl?: string | undefined;
  /** `--oauth-scopes call=NAME,approve=NAME,administer=NAME` (any subset) */
  scopes?: string | undefined;
}

/** The `parseArgs` options of the flags. */
export const OAUTH_FLAG_OPTIONS = {
  "oauth-issuer": { type: "string" },
  "oauth-audience": { type: "string" },
  "oauth-jwks-url": { type: "string" },
  "oauth-scopes": { type: "string" },
} as const;

/**
 * The flags of a parsed command line.
 * @param values `parseArgs` values that include {@link OAUTH_FLAG_OPTIONS}
 */
export function oauthFlagsOf(values: {
  "oauth-issuer"?: string | undefined;
  "oauth-audience"?: string | undefined;
  "oauth-jwks-url"?: string | undefined;
  "oauth-scopes"?: string | undefined;
}): OAuthFlags {
  return {
    issuer: values["oauth-issuer"],
    audience: values["oauth-audience"],
    jwksUrl: values["oauth-jwks-url"],
    scopes: values["oauth-scopes"],
  };
}

/**
 * The resource server's options of the flags, checked before anything starts.
 * @returns the options, or `undefined` without `--oauth-issuer` (and no other identity flag)
 * @throws GovernanceError `INVALID_CONFIG` for another identity flag without `--oauth-issuer`, a
 *   malformed `--oauth-scopes`, or what `checkOAuthResourceOptions` refuses
 */
export function oauthOptionsOf(flags: OAuthFlags): OAuthResourceOptions | undefined {
  if (flags.issuer === undefined) {
    const stray = (["audience", "jwksUrl", "scopes"] as const).find((key) => flags[key] !== undefined);
    if (stray !== undefined) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        "--oauth-audience, --oauth-jwks-url and --oauth-scopes go with --oauth-issuer URL.",
        { data: { field: "--oauth-issuer" } },
      );
    }
    return undefined;
  }
  const options: OAuthResourceOptions = {
    issuer: flags.issuer,
    ...(flags.audience === undefined ? {} : { audience: flags.audience }),
    ...(flags.jwksUrl === undefined ? {} : { jwksUrl: flags.jwksUrl }),
    ...(flags.scopes === undefined ? {} : { scopes: scopesOf(flags.scopes) }),
  };
  checkOAuthResourceOptions(options);
  return options;
}

function scopesOf(value: string): Partial<Record<IdentityAbility, string>> {
  const scopes: Partial<Record<IdentityAbility, string>> = {};
  for (const part of value.split(",")) {
    const [ability, name] = part.split("=", 2).map((text) => text.trim());
    if (
      (ability !== "call" && ability !== "approve" && ability !== "administer") ||
      name === undefined ||
      name === ""
    ) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        `--oauth-scopes takes call=NAME,approve=NAME,administer=NAME; got '${value}'.`,
        { data: { field: "--oauth-scopes", value } },
      );
    }
    scopes[ability] = name;
  }
  return scopes;
}
