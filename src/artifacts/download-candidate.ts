/**
 * Re-reads a download candidate from the CAS copy of the invocation that returned it, so the model
 * can only download what a governed, successful call really offered, from that source's hosts.
 */

import type { ArtifactCandidate, McpToolResult } from "../contract/index.js";
import { GovernanceError } from "../core/index.js";
import type { ContentStore, Ledger } from "../governance/audit/index.js";
import type { SourceManifest } from "../governance/manifests/index.js";

/** The part of `SourceCatalog` the download needs: a source's manifest by id. */
export interface ManifestLookup {
  source(id: string): { manifest: SourceManifest } | undefined;
}

/** A candidate that passed every identity, URL and license check. */
export interface VerifiedCandidate {
  candidate: ArtifactCandidate;
  /** Lowercase hosts of the source manifest's `networkHosts`: the only hosts a download may touch. */
  hosts: ReadonlySet<string>;
  /** The license the download carries (the candidate's, else the result's). */
  license: string;
  warnings: string[];
}

/**
 * Loads and checks a candidate. License rule: the candidate's own license is used; when it has none
 * the result's license applies with a warning; when neither is present the download is refused.
 * @param deps the ledger, the CAS and the manifest lookup
 * @param mcpInvocationId the ledger row of the call that returned the candidate
 * @param candidateId the candidate's id inside that result
 * @returns the candidate, its allowed hosts, license and warnings
 * @throws GovernanceError `NOT_FOUND` for an unknown invocation or a candidate it did not return;
 *   `INVALID_INPUT` for a failed invocation or one without a stored result; `PERMISSION_DENIED` for a
 *   source mismatch or a URL that is not HTTPS on an allowed host; `SOURCE_DISABLED` when the source
 *   is not in the catalog; `LICENSE_BLOCKED` without any license
 */
export async function loadCandidate(
  deps: { ledger: Ledger; store: ContentStore; catalog: ManifestLookup },
  mcpInvocationId: string,
  candidateId: string,
): Promise<VerifiedCandidate> {
  const row = await deps.ledger.get(mcpInvocationId);
  if (row === undefined)
    throw new GovernanceError("NOT_FOUND", `No invocation '${mcpInvocationId}' in the ledger.`);
  if (row.status !== "ok" || row.normalizedRef === undefined) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `Invocation '${mcpInvocationId}' did not succeed with a stored result; only candidates of a successful call can be downloaded.`,
    );
  }
  const result = await deps.store.getJson<McpToolResult>(row.normalizedRef);
  const candidate = (result.artifacts ?? []).find((item) => item.candidateId === candidateId);
  if (candidate === undefined) {
    throw new GovernanceError(
      "NOT_FOUND",
      `Invocation '${mcpInvocationId}' did not return a candidate '${candidateId}'.`,
      { data: { mcpInvocationId, candidateId } },
    );
  }
  if (result.sourceId !== row.sourceId || candidate.sourceId !== row.sourceId) {
    throw new GovernanceError(
      "PERMISSION_DENIED",
      `Candidate '${candidateId}' claims source '${candidate.sourceId}' but invocation '${mcpInvocationId}' called '${row.sourceId}'.`,
    );
  }
  const source = deps.catalog.source(row.sourceId);
  if (source === undefined) {
    throw new GovernanceError("SOURCE_DISABLED", `Source '${row.sourceId}' is not in the catalog.`);
  }
  const hosts = new Set(source.manifest.governance.networkHosts.map((host) => host.toLowerCase()));
  const problem = downloadUrlProblem(candidate.url, hosts);
  if (problem !== undefined) {
    throw new GovernanceError("PERMISSION_DENIED", `Refused candidate '${candidateId}': ${problem}.`);
  }
  const warnings: string[] = [];
  let license = candidate.license?.trim() ?? "";
  if (license === "") {
    license = (result.license ?? row.license ?? "").trim();
    if (license === "") {
      throw new GovernanceError(
        "LICENSE_BLOCKED",
        `Candidate '${candidateId}' carries no license and neither does its result; it cannot be downloaded.`,
      );
    }
    warnings.push(
      `Candidate '${candidateId}' has no license of its own; the result's license '${license}' applies.`,
    );
  }
  return { candidate, hosts, license, warnings };
}

/**
 * Why a URL may not be fetched: it must parse, be `https:`, have no user information and no explicit
 * port, and its host must be exactly one of `hosts`.
 * @param url the URL (a candidate URL or a redirect target)
 * @param hosts the allowed lowercase hosts
 * @returns a reason, or `undefined` when the URL is fine
 */
export function downloadUrlProblem(url: string, hosts: ReadonlySet<string>): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `'${url}' is not a valid URL`;
  }
  if (parsed.protocol !== "https:") return `'${url}' uses ${parsed.protocol} instead of https:`;
  if (parsed.username !== "" || parsed.password !== "") return `'${url}' carries user information`;
  if (parsed.port !== "") return `'${url}' uses port ${parsed.port}`;
  if (!hosts.has(parsed.hostname)) return `host '${parsed.hostname}' is not on the source's allowlist`;
  return undefined;
}
