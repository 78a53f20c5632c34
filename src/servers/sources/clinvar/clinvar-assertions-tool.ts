/** `clinvar_get_assertions`: the classifications and individual submissions (SCVs) behind a ClinVar record. */
import { z } from "zod";
import { invalidId } from "../identifiers.js";
import { maxResultsInput, startInput } from "../input-schemas.js";
import { efetch } from "../ncbi/eutils.js";
import { offsetPaging } from "../paging.js";
import { ProviderError } from "../provider-error.js";
import { defineTool } from "../source-module.js";
import { CLINVAR_ID_FORMS, normalizeClinvarId } from "./clinvar-ids.js";
import { parseClinvarRcv } from "./clinvar-rcv-parser.js";
import { versionWarnings } from "./clinvar-search-tools.js";
import { parseClinvarVcv } from "./clinvar-vcv-parser.js";

/** `clinvar_get_assertions`: EFetch of the VCV (or RCV) XML, submissions paged. */
export const clinvarGetAssertionsTool = defineTool({
  id: "get_assertions",
  title: "Get ClinVar classifications and submissions",
  description:
    "Get the assertions behind a ClinVar record (VCV accession, variation id or RCV accession): each aggregate " +
    "classification (germline, somatic clinical impact, oncogenicity) with review status as 0-4 stars, and the " +
    "individual submissions (SCV) with submitter, classification, review status, conditions, allele origin, " +
    "method and PubMed citations in data.submissions. Pages submissions with start/max_results.",
  inputShape: {
    accession: z
      .string()
      .trim()
      .min(1)
      .describe(
        "VCV000012345, a variation id (12345), RCV000012345, a versioned accession or a ClinVar URL.",
      ),
    max_results: maxResultsInput(25, 100),
    start: startInput(9_999),
  },
  async run(input, { http }) {
    const id = normalizeClinvarId(input.accession) ?? invalidId(input.accession, CLINVAR_ID_FORMS);
    const parsed =
      id.kind === "rcv"
        ? parseClinvarRcv(await efetch(http, "clinvar", [id.accession], "clinvarset"))
        : parseClinvarVcv(await efetch(http, "clinvar", [id.accession], "vcv"));
    if (parsed.accession !== id.accession) {
      throw new ProviderError("not_found", `ClinVar has no record ${id.accession}.`);
    }
    const start = input.start ?? 0;
    const page = parsed.submissions.slice(start, start + input.max_results);
    const warnings = versionWarnings(id, parsed.version);
    if (parsed.submissions.length === 0) warnings.push("ClinVar lists no submissions for this record.");
    return {
      records: [parsed.record],
      warnings,
      data: {
        accession: parsed.accession,
        ...(parsed.variationId ? { variationId: parsed.variationId } : {}),
        classifications: parsed.classifications,
        ...("rcvClassifications" in parsed ? { rcvClassifications: parsed.rcvClassifications } : {}),
        ...offsetPaging({ total: parsed.submissions.length, start, fetched: page.length }),
        submissions: page,
      },
    };
  },
});
