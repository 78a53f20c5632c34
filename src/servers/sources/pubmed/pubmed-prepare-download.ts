/** `pubmed_prepare_paper_download`: download candidates from the PMC Open Access subset (never downloads). */
import { z } from "zod";
import type { ArtifactCandidate, McpRecord } from "../../../contract/index.js";
import { invalidId } from "../identifiers.js";
import { ProviderError } from "../provider-error.js";
import { buildRecord } from "../record-builder.js";
import { defineTool } from "../source-module.js";
import { parsePmcOaAnswer } from "./pmc-oa-parser.js";
import { fetchPubmedArticles } from "./pubmed-articles.js";
import { normalizePmcid, normalizePmid, pmcUrl } from "./pubmed-ids.js";

/** Candidate order: the PDF first, then the article package. */
const FORMAT_ORDER = ["pdf", "tgz"];

/** `pubmed_prepare_paper_download`: PMID or PMCID → HTTPS candidates of the PMC OA files. */
export const pubmedPreparePaperDownloadTool = defineTool({
  id: "prepare_paper_download",
  title: "Plan a PubMed Central paper download",
  description:
    "Plan the download of an open-access paper from PubMed Central: returns download candidates (PDF and the " +
    "article package) with licence, for artifact_download. Downloads nothing. Fails with not_open_access when " +
    "the article is not in the PMC Open Access subset.",
  inputShape: {
    id: z
      .string()
      .trim()
      .min(1)
      .describe("A PMID (12345678, PMID:12345678) or PMCID (PMC1234567), or their URLs."),
  },
  async run(input, { http }) {
    let pmcid = normalizePmcid(input.id);
    let record: McpRecord | undefined;
    if (!pmcid) {
      const pmid = normalizePmid(input.id) ?? invalidId(input.id, "a PMID or PMCID");
      const { records } = await fetchPubmedArticles(http, [pmid]);
      record = records[0];
      if (!record) throw new ProviderError("not_found", `PubMed has no record PMID:${pmid}.`);
      pmcid = record.crossReferences.find((ref) => ref.identifierType === "pmcid")?.identifier;
      if (!pmcid) {
        throw new ProviderError(
          "not_open_access",
          `PMID:${pmid} has no PubMed Central copy, so no open-access file.`,
        );
      }
    }
    const response = await http.request("pmc-oa", "/oa.fcgi", {
      query: { id: pmcid },
      accept: "application/xml",
    });
    const oa = parsePmcOaAnswer(response);
    const links = [...oa.links].sort((a, b) => rank(a.format) - rank(b.format));
    if (links.length === 0) {
      throw new ProviderError("not_open_access", `The PMC OA service lists no HTTPS file for ${oa.pmcid}.`);
    }
    const artifacts = links.map((link): ArtifactCandidate => {
      const candidate: ArtifactCandidate = {
        candidateId: `pubmed:${oa.pmcid}:${link.format}`,
        sourceId: "pubmed",
        sourceRecordId: oa.pmcid,
        url: link.url,
        format: link.format,
        kind: "paper",
        filename: link.url.slice(link.url.lastIndexOf("/") + 1),
      };
      if (oa.license) candidate.license = oa.license;
      return candidate;
    });
    const warnings: string[] = [];
    if (!oa.license)
      warnings.push("The PMC OA service states no licence for this article; check before reuse.");
    if (oa.retracted) warnings.push(`PubMed Central marks ${oa.pmcid} as retracted.`);
    if (oa.skippedLinks > 0)
      warnings.push(`${oa.skippedLinks} listed file(s) were not on an NCBI HTTPS host.`);
    return {
      records: [record ?? pmcRecord(oa.pmcid, oa.citation, oa.license)],
      artifacts,
      warnings,
      data: { pmcid: oa.pmcid, license: oa.license ?? null, retracted: oa.retracted },
    };
  },
});

function rank(format: string): number {
  const index = FORMAT_ORDER.indexOf(format);
  return index < 0 ? FORMAT_ORDER.length : index;
}

function pmcRecord(pmcid: string, citation: string | undefined, license: string | undefined): McpRecord {
  return buildRecord({
    source: "pubmed",
    identifier: pmcid,
    identifierType: "pmcid",
    label: pmcid,
    url: pmcUrl(pmcid),
    // The OA service gives a bibliographic citation, not a title; it is the best name available here.
    title: citation,
    structuredData: { ...(citation ? { citation } : {}), ...(license ? { license } : {}) },
  });
}
