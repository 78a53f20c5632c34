/**
 * The download candidates an invocation offered (its normalized result's `artifacts`), each with the
 * jobs that downloaded it: what `artifact_download` could fetch from this call, and what it did.
 */
import type { DownloadJob } from "../artifacts/index.js";
import type { ArtifactCandidate } from "../contract/index.js";
import { html, type SafeHtml } from "./console-html.js";
import type { ConsoleContext } from "./console-route.js";
import { badge, bytes, externalLink } from "./console-ui.js";

/** The most candidates listed (a result offers a handful; the whole result is one link away). */
const MAX_CANDIDATES_SHOWN = 100;

const TONE: Record<string, "ok" | "error" | "warn" | "neutral"> = {
  completed: "ok",
  failed: "error",
  cancelled: "warn",
};

/**
 * The candidates table, or nothing when the result offered none.
 * @param result the parsed normalized result (third-party data: only well-formed candidates are shown)
 * @param jobs the jobs made from this invocation's candidates
 * @param context links
 */
export function candidatesSection(
  result: unknown,
  jobs: readonly DownloadJob[],
  context: ConsoleContext,
): SafeHtml {
  const artifacts = (result as { artifacts?: unknown } | null | undefined)?.artifacts;
  const candidates = Array.isArray(artifacts) ? artifacts.filter(isCandidate) : [];
  if (candidates.length === 0) return html``;
  const shown = candidates.slice(0, MAX_CANDIDATES_SHOWN);
  return html`<h3>Download candidates (${candidates.length})</h3>${
    shown.length < candidates.length
      ? html`<p class="muted">Showing the first ${shown.length} of ${candidates.length} candidates.</p>`
      : ""
  }<div class="table-wrap"><table id="candidates">
<thead><tr><th>Candidate</th><th>Kind</th><th>URL</th><th>License</th><th class="num">Size</th><th>Jobs</th></tr></thead>
<tbody>${shown.map((candidate) => {
    const made = jobs.filter((job) => job.candidateId === candidate.candidateId);
    return html`<tr data-id="${candidate.candidateId}">
<td><code>${candidate.candidateId}</code><div class="muted">${candidate.sourceId} ${candidate.sourceRecordId}</div></td>
<td>${candidate.kind} <span class="muted">${candidate.format}</span></td>
<td>${externalLink(candidate.url)}</td>
<td>${candidate.license ?? html`<span class="muted">—</span>`}</td>
<td class="num">${bytes(candidate.sizeBytes)}</td>
<td>${
      made.length === 0
        ? html`<span class="muted">not downloaded</span>`
        : made.map(
            (job) =>
              html`<div><a href="${context.href("/jobs")}#job-${job.jobId}">${badge(job.status, TONE[job.status] ?? "neutral")}</a> <code class="muted">${job.destinationPath}</code></div>`,
          )
    }</td>
</tr>`;
  })}</tbody></table></div>`;
}

function isCandidate(value: unknown): value is ArtifactCandidate {
  const c = value as Partial<Record<keyof ArtifactCandidate, unknown>> | null;
  return (
    typeof c === "object" &&
    c !== null &&
    typeof c.candidateId === "string" &&
    typeof c.sourceId === "string" &&
    typeof c.sourceRecordId === "string" &&
    typeof c.url === "string" &&
    typeof c.format === "string" &&
    typeof c.kind === "string" &&
    (c.license === undefined || typeof c.license === "string") &&
    (c.sizeBytes === undefined || typeof c.sizeBytes === "number")
  );
}
