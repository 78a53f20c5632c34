/**
 * The Papers page: every paper whose full text was extracted (the verified `paper_extract_pdf` rows of
 * the ledger), with its manifest's facts (pages, pages that need vision, characters, parser), and one
 * paper's text, read back bounded and never through a link (`readPaperText`).
 */
import {
  type FullTextExtraction,
  loadExtractionIndex,
  type PdfManifest,
  readPaperManifest,
  readPaperText,
} from "../artifacts/index.js";
import { GovernanceError, isGovernanceError } from "../core/index.js";
import type { Governance } from "../runtime/index.js";
import { html, type SafeHtml } from "./console-html.js";
import { pageOf, pageParam, pager } from "./console-paging.js";
import type { ConsoleContext, ConsoleRoute } from "./console-route.js";
import { badge, bytes, facts, time, truncated } from "./console-ui.js";

/** `GET /papers`, `GET /papers/:jobId`, `GET /papers/:jobId/text`. */
export const papersRoutes: readonly ConsoleRoute[] = [
  {
    method: "GET",
    pattern: "/papers",
    async handle(request, context) {
      const { papers, corrupt } = await extractedPapers(context.governance);
      const list = pageOf(papers, pageParam(request.url));
      const rows: SafeHtml[] = [];
      for (const paper of list.items) {
        rows.push(paperRow(context, paper, await manifestOrProblem(context.governance, paper.artifactJobId)));
      }
      const body = html`<p class="muted">${list.total.toLocaleString("en")} extracted paper${list.total === 1 ? "" : "s"} (successful <code>paper_extract_pdf</code> calls whose ledger entry verifies), newest first.</p>
${corruptNotice(context, corrupt)}
${
  list.total === 0
    ? html`<p class="muted" id="papers-empty">No paper extracted yet: <code>paper_extract_pdf</code> extracts a downloaded PDF.</p>`
    : html`<div class="table-wrap"><table id="papers">
<thead><tr><th>Download job</th><th>Source and record</th><th class="num">Pages</th><th>Pages that need vision</th><th class="num">Characters</th><th>Parser</th><th>Extracted</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
${pager(context, "/papers", list)}`;
      return { kind: "page", title: "Papers", section: "papers", body };
    },
  },
  {
    method: "GET",
    pattern: "/papers/:jobId",
    async handle(request, context) {
      const { governance } = context;
      const paper = await requirePaper(governance, request.params.jobId ?? "");
      const manifest = await manifestOrProblem(governance, paper.artifactJobId);
      const textHref = context.href(`/papers/${encodeURIComponent(paper.artifactJobId)}/text`);
      let text: SafeHtml;
      try {
        text = truncated(await readPaperText(governance.dataDir, paper.artifactJobId), textHref);
      } catch (error) {
        if (!isGovernanceError(error)) throw error;
        text = html`<p class="error-box"><code>${error.code}</code> ${error.message}</p>`;
      }
      const body = html`${facts([
        ["Download job", html`<code>${paper.artifactJobId}</code>`],
        ["Source", paper.sourceId],
        ["Record", html`<code>${paper.sourceRecordId}</code>`],
        ["Extracted", time(paper.extractedAt)],
        ["Extraction call", invocationLink(context, paper.invocationId)],
        ["Offered by", invocationLink(context, paper.mcpInvocationId)],
        ["PDF SHA-256", html`<code>${paper.inputSha256}</code>`],
        ...manifestFacts(manifest),
      ])}
${warningsList(paper.warnings ?? [])}
${"problem" in manifest ? "" : pagesTable(manifest)}
<h2>Text</h2>
<p><a href="${textHref}" id="paper-text-link">The whole text</a> (plain text, as extracted).</p>
<div id="paper-text">${text}</div>`;
      return { kind: "page", title: `Paper ${paper.sourceRecordId}`, section: "papers", body };
    },
  },
  {
    method: "GET",
    pattern: "/papers/:jobId/text",
    async handle(request, context) {
      const { governance } = context;
      const paper = await requirePaper(governance, request.params.jobId ?? "");
      return {
        kind: "file",
        contentType: "text/plain; charset=utf-8",
        body: await readPaperText(governance.dataDir, paper.artifactJobId),
      };
    },
  },
];

/** A paper: its latest verified extraction. */
type Paper = FullTextExtraction;

/** The latest verified extraction of each download job, newest first, and the rows that do not verify. */
async function extractedPapers(governance: Governance) {
  const { extractions, corrupt } = await loadExtractionIndex(governance);
  const latest = new Map<string, Paper>();
  for (const extraction of extractions) {
    latest.delete(extraction.artifactJobId);
    latest.set(extraction.artifactJobId, extraction);
  }
  return { papers: [...latest.values()].reverse(), corrupt };
}

/**
 * The paper of a download job; an id found in no verified extraction row never reaches the file system.
 * @throws GovernanceError `NOT_FOUND`
 */
async function requirePaper(governance: Governance, jobId: string): Promise<Paper> {
  const { papers } = await extractedPapers(governance);
  const paper = papers.find((candidate) => candidate.artifactJobId === jobId);
  if (paper === undefined) {
    throw new GovernanceError(
      "NOT_FOUND",
      `No extracted paper of download job '${jobId}': the ledger has no verified paper_extract_pdf call for it.`,
      { data: { artifactJobId: jobId } },
    );
  }
  return paper;
}

/** The manifest, or why it cannot be shown (the list still shows the paper). */
async function manifestOrProblem(
  governance: Governance,
  jobId: string,
): Promise<PdfManifest | { problem: string }> {
  try {
    return await readPaperManifest(governance.dataDir, jobId);
  } catch (error) {
    if (!isGovernanceError(error)) throw error;
    return { problem: `${error.code}: ${error.message}` };
  }
}

function paperRow(context: ConsoleContext, paper: Paper, manifest: PdfManifest | { problem: string }) {
  const detail = context.href(`/papers/${encodeURIComponent(paper.artifactJobId)}`);
  const known = "problem" in manifest ? undefined : manifest;
  return html`<tr data-job-id="${paper.artifactJobId}">
<td><a href="${detail}"><code>${paper.artifactJobId}</code></a></td>
<td>${paper.sourceId}<div class="mono muted">${paper.sourceRecordId}</div></td>
<td class="num" data-pages>${known?.pageCount ?? paper.pageCount}</td>
<td data-vision-pages>${known ? visionPages(known) : html`<span class="error-box">${(manifest as { problem: string }).problem}</span>`}</td>
<td class="num" data-characters>${known ? known.textCharacters.toLocaleString("en") : "—"}</td>
<td>${known?.parser ?? "—"}</td>
<td>${time(paper.extractedAt)}</td>
</tr>`;
}

function visionPages(manifest: PdfManifest): SafeHtml {
  const pages = manifest.pages.filter((page) => page.needsVision).map((page) => page.page);
  return pages.length === 0
    ? html`<span class="muted">none</span>`
    : html`${badge(`${pages.length} of ${manifest.pageCount}`, "warn")} page ${pages.join(", ")}`;
}

function manifestFacts(
  manifest: PdfManifest | { problem: string },
): [string, SafeHtml | string | number | undefined][] {
  if ("problem" in manifest) return [["Manifest", html`<span class="error-box">${manifest.problem}</span>`]];
  return [
    ["Pages", manifest.pageCount],
    ["Pages that need vision", visionPages(manifest)],
    ["Characters", manifest.textCharacters.toLocaleString("en")],
    ["Parser", manifest.parser],
    ["PDF size", bytes(manifest.pdfBytes)],
  ];
}

function pagesTable(manifest: PdfManifest): SafeHtml {
  return html`<details><summary>Pages (${manifest.pages.length})</summary><div class="table-wrap"><table id="paper-pages">
<thead><tr><th class="num">Page</th><th class="num">Characters</th><th>Text</th></tr></thead>
<tbody>${manifest.pages.map(
    (page) =>
      html`<tr><td class="num">${page.page}</td><td class="num">${page.textCharacters.toLocaleString("en")}</td><td>${page.needsVision ? badge("needs vision", "warn") : badge("text", "ok")}</td></tr>`,
  )}</tbody></table></div></details>`;
}

function warningsList(warnings: readonly string[]): SafeHtml {
  if (warnings.length === 0) return html``;
  return html`<ul class="warnings">${warnings.map((warning) => html`<li>${warning}</li>`)}</ul>`;
}

function invocationLink(context: ConsoleContext, invocationId: string): SafeHtml {
  return html`<a href="${context.href(`/invocations/${encodeURIComponent(invocationId)}`)}"><code>${invocationId}</code></a>`;
}

function corruptNotice(
  context: ConsoleContext,
  corrupt: readonly { invocationId: string; ref: string }[],
): SafeHtml {
  if (corrupt.length === 0) return html``;
  return html`<div class="error-box" id="papers-corrupt"><strong>${corrupt.length} extraction row${corrupt.length === 1 ? "" : "s"} whose stored entry is missing or altered</strong> (not listed: they prove nothing):<ul>${corrupt.map(
    (row) => html`<li>${invocationLink(context, row.invocationId)} <code>${row.ref}</code></li>`,
  )}</ul></div>`;
}
