/** `europe-pmc_prepare_paper_download`: full-text candidates of an open-access article (never downloads). */
import { z } from "zod";
import type { ArtifactCandidate } from "../../../contract/index.js";
import { invalidId } from "../identifiers.js";
import { ProviderError } from "../provider-error.js";
import { defineTool } from "../source-module.js";
import { searchEuropePmc } from "./europe-pmc-client.js";
import { EUROPE_PMC_REST_BASE_URL, normalizeEuropePmcPmcid } from "./europe-pmc-ids.js";
import { europePmcRecord } from "./europe-pmc-record.js";

const ID_FORMS = "a PMCID (PMC1234567, PMCID:PMC1234567, or a europepmc.org or PMC article URL)";

/** `europe-pmc_prepare_paper_download`: PMCID → the rendered PDF and the JATS XML of an open-access article. */
export const europePmcPreparePaperDownloadTool = defineTool({
  id: "prepare_paper_download",
  title: "Plan a Europe PMC paper download",
  description:
    "Plan the download of an open-access article from Europe PMC by PMCID: returns download candidates (the PDF " +
    "that Europe PMC renders and the JATS full-text XML) with licence, for artifact_download. Downloads nothing. " +
    "Fails with not_open_access when the article is not in the Europe PMC open-access subset.",
  inputShape: {
    id: z
      .string()
      .trim()
      .min(1)
      .describe("A PMCID (PMC1234567, PMCID:PMC1234567) or its europepmc.org or pmc.ncbi.nlm.nih.gov URL."),
  },
  async run(input, { http }) {
    const pmcid = normalizeEuropePmcPmcid(input.id) ?? invalidId(input.id, ID_FORMS);
    // PMCID:<id> finds the article whichever source (MED or PMC) Europe PMC files it under.
    const page = await searchEuropePmc(http, "rest", { query: `PMCID:${pmcid}`, pageSize: 5 });
    const hit = page.hits.find((h) => h.pmcid?.toUpperCase() === pmcid);
    if (!hit) throw new ProviderError("not_found", `Europe PMC has no article ${pmcid}.`);
    if (!hit.isOpenAccess) {
      throw new ProviderError(
        "not_open_access",
        `${pmcid} is not in the Europe PMC open-access subset; its full text may be free to read but not to reuse.`,
      );
    }
    const license = hit.license?.toUpperCase();
    const candidate = (format: "pdf" | "xml", url: string): ArtifactCandidate => ({
      candidateId: `europe-pmc:${pmcid}:${format}`,
      sourceId: "europe-pmc",
      sourceRecordId: pmcid,
      url,
      format,
      kind: "paper",
      filename: `${pmcid}.${format}`,
      ...(license ? { license } : {}),
    });
    const artifacts: ArtifactCandidate[] = [];
    if (hit.hasPDF) artifacts.push(candidate("pdf", `https://europepmc.org/articles/${pmcid}?pdf=render`));
    // Europe PMC serves the JATS XML only of the articles whose full text it holds itself.
    if (hit.inEPMC) artifacts.push(candidate("xml", `${EUROPE_PMC_REST_BASE_URL}/${pmcid}/fullTextXML`));
    if (artifacts.length === 0) {
      throw new ProviderError("not_open_access", `Europe PMC lists no full-text file for ${pmcid}.`);
    }
    const warnings = license ? [] : ["Europe PMC states no licence for this article; check before reuse."];
    return {
      records: [europePmcRecord(hit)],
      artifacts,
      warnings,
      data: { pmcid, license: license ?? null, isOpenAccess: true },
    };
  },
});
