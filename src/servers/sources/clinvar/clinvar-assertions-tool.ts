/** `clinvar_get_assertions`: the classifications and individual submissions (SCVs) behind a ClinVar record. */
import { z } from "zod";
import { invalidId } from "../identifiers.js";
import { maxResultsInput, startInput } from "../input-schemas.js";
import { efetch } from "../ncbi/eutils.js";
import { offsetPaging } from "../paging.js";
import { isProviderError, ProviderError } from "../provider-error.js";
import { defineTool, type SourceHttp } from "../source-module.js";
import { CLINVAR_ID_FORMS, normalizeClinvarId } from "./clinvar-ids.js";
import { parseClinvarRcv, parseClinvarRcvMembers } from "./clinvar-rcv-parser.js";
import { versionWarnings } from "./clinvar-search-tools.js";
import { type ClinvarVariationArchive, parseClinvarVcv } from "./clinvar-vcv-parser.js";

/** At most this many RCV records are fetched to place the submissions a VCV record does not tie to one. */
const MAX_RCV_LOOKUPS = 20;

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
    const resolved: string[] = [];
    const parsed =
      id.kind === "rcv"
        ? parseClinvarRcv(await efetch(http, "clinvar", [id.accession], "clinvarset"))
        : await readVariation(http, id.accession, resolved);
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
        ...(resolved.length > 0 ? { placedFromRcvRecords: resolved } : {}),
        ...offsetPaging({ total: parsed.submissions.length, start, fetched: page.length }),
        submissions: page,
      },
    };
  },
});

/**
 * The VCV record, with every submission under its condition: where the VCV document leaves some conditions'
 * submissions undecided (codes it does not resolve), the RCV records of those conditions, which list their
 * SCVs, decide (one more EFetch).
 * @param resolved filled with the RCV accessions whose records were read
 */
async function readVariation(
  http: SourceHttp,
  accession: string,
  resolved: string[],
): Promise<ClinvarVariationArchive> {
  const answer = await efetch(http, "clinvar", [accession], "vcv");
  const first = parseClinvarVcv(answer);
  const open = first.rcvClassifications.filter((rcv) => rcv.unresolved).map((rcv) => rcv.accession);
  if (open.length === 0 || open.length > MAX_RCV_LOOKUPS) return first;
  let members: Map<string, string[]>;
  try {
    members = parseClinvarRcvMembers(await efetch(http, "clinvar", open, "clinvarset"));
  } catch (error) {
    // The VCV record stands on its own; its warning already says which conditions' lists are incomplete.
    if (isProviderError(error)) return first;
    throw error;
  }
  if (members.size === 0) return first;
  resolved.push(...open.filter((rcv) => members.has(rcv)));
  return parseClinvarVcv(answer, members);
}
