/**
 * Re-reads a download candidate from the CAS copy of the invocation that returned it, so the model
 * can only download what a governed, successful call really offered, from that source's hosts.
 */

import type { ArtifactCandidate, McpToolResult } from "../contract/index.js";
import { GovernanceError } from "../core/index.js";
import type { ContentStore, InvocationRecord, LedgerReader } from "../governance/audit/index.js";
import type { SourceManifest } from "../governance/manifests/index.js";
import type { SessionSettings } from "../governance/permissions/index.js";

/** The part of `SourceCatalog` the download needs: a source's manifest by id. */
export interface ManifestLookup {
  /** The source's manifest, or `undefined` for a source that is not registered. */
  source(id: string): { manifest: SourceManifest } | undefined;
}

/** What reading and checking a candidate needs. */
export interface CandidateDeps {
  ledger: LedgerReader;
  store: ContentStore;
  catalog: ManifestLookup;
  /** The per-session source switches the broker enforces. */
  sessions: Pick<SessionSettings, "isSourceEnabled">;
}

/** `data.reason` of the refusals that bind a candidate to the requesting session (audited by the manager). */
export const SESSION_BINDING_REASONS: ReadonlySet<unknown> = new Set([
  "invocation_of_another_session",
  "source_disabled_for_session",
]);

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
 * Only the session that made the invocation may download its candidates, and only while the source is
 * enabled for that session (the rule the broker applies to a direct call).
 * @param deps the ledger, the CAS, the manifest lookup and the session switches
 * @param mcpInvocationId the ledger row of the call that returned the candidate
 * @param candidateId the candidate's id inside that result
 * @param sessionId the session asking for the download
 * @returns the candidate, its allowed hosts, license and warnings
 * @throws GovernanceError `NOT_FOUND` for an unknown invocation or a candidate it did not return;
 *   `PERMISSION_DENIED` for an invocation of another session, a source mismatch or a URL that is not
 *   HTTPS on an allowed host; `INVALID_INPUT` for a failed invocation or one without a stored result;
 *   `SOURCE_DISABLED` when the source is not in the catalog or is switched off for the session;
 *   `LICENSE_BLOCKED` without any license
 */
export async function loadCandidate(
  deps: CandidateDeps,
  mcpInvocationId: string,
  candidateId: string,
  sessionId: string,
): Promise<VerifiedCandidate> {
  const row = await deps.ledger.get(mcpInvocationId);
  if (row === undefined)
    throw new GovernanceError("NOT_FOUND", `No invocation '${mcpInvocationId}' in the ledger.`);
  const unbound = sessionBindingRefusal(deps, row, sessionId);
  if (unbound) throw unbound;
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
 * Why the requesting session may not download from an invocation: it belongs to another session, or
 * its source is switched off for this session.
 * @param deps the manifest lookup and the session switches
 * @param row the invocation that returned the candidate
 * @param sessionId the requesting session
 * @returns the refusal (`data.reason` in `SESSION_BINDING_REASONS`), or `undefined`
 */
export function sessionBindingRefusal(
  deps: Pick<CandidateDeps, "catalog" | "sessions">,
  row: InvocationRecord,
  sessionId: string,
): GovernanceError | undefined {
  if (row.sessionId !== sessionId) {
    // Another session's invocation id is refused as such; its source, tool and result stay undisclosed.
    return new GovernanceError(
      "PERMISSION_DENIED",
      `Invocation '${row.invocationId}' belongs to another session; a session can only download candidates of its own calls.`,
      { data: { reason: "invocation_of_another_session", mcpInvocationId: row.invocationId } },
    );
  }
  const source = deps.catalog.source(row.sourceId);
  if (source !== undefined && !deps.sessions.isSourceEnabled(sessionId, source.manifest)) {
    return new GovernanceError(
      "SOURCE_DISABLED",
      `Source '${row.sourceId}' is not enabled for session '${sessionId}'. Enable it for the session first.`,
      { data: { reason: "source_disabled_for_session", sourceId: row.sourceId } },
    );
  }
  return undefined;
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
