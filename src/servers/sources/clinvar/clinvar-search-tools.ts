/** The ClinVar query tools: `search_variants` and `lookup_accession`. */
import { z } from "zod";
import type { McpRecord } from "../../../contract/index.js";
import { invalidId } from "../identifiers.js";
import { maxResultsInput, queryInput, startInput } from "../input-schemas.js";
import { esummary } from "../ncbi/esummary.js";
import { efetch, esearch, widenedSearchWarnings } from "../ncbi/eutils.js";
import { offsetPaging } from "../paging.js";
import { ProviderError } from "../provider-error.js";
import type { SourceHttp } from "../source-module.js";
import { defineTool } from "../source-module.js";
import { CLINVAR_ID_FORMS, type ClinvarId, normalizeClinvarId } from "./clinvar-ids.js";
import { parseClinvarRcv } from "./clinvar-rcv-parser.js";
import { clinvarSummaryRecord } from "./clinvar-summary-parser.js";

/** Deepest ESearch offset offered; ClinVar holds a few million variations. */
const CLINVAR_MAX_START = 999_999;

/** `clinvar_search_variants`: ESearch on db=clinvar, then ESummary of the hits. */
export const clinvarSearchVariantsTool = defineTool({
  id: "search_variants",
  title: "Search ClinVar variants",
  description:
    "Search ClinVar for human genetic variants and return each hit's VCV accession, name, genes, locations " +
    "(1-based, per assembly), canonical SPDI (0-based), " +
    "germline classification, somatic clinical impact and oncogenicity with review status (0-4 stars) and " +
    "conditions. A query NCBI widened is named in the warnings. Pages with start/max_results.",
  inputShape: {
    query: queryInput(
      "ClinVar query; Entrez syntax works: gene symbols, HGVS (NM_007294.4:c.68_69del), rs ids, conditions, " +
        'field tags such as BRCA1[gene] or "breast cancer"[dis]; AND, OR, NOT.',
    ),
    max_results: maxResultsInput(20, 100),
    start: startInput(CLINVAR_MAX_START),
  },
  async run(input, { http }) {
    const start = input.start ?? 0;
    const page = await esearch(http, { db: "clinvar", term: input.query, start, max: input.max_results });
    const { records, missing } = await summaryRecords(http, page.ids);
    const warnings = widenedSearchWarnings(page, "ClinVar");
    if (missing.length > 0)
      warnings.push(`${missing.length} hit(s) had no ClinVar summary and are left out.`);
    return {
      records,
      warnings,
      data: {
        ...offsetPaging({ total: page.total, start, fetched: page.ids.length, returned: records.length }),
        ...(page.queryTranslation ? { queryTranslation: page.queryTranslation } : {}),
        ...(page.dropped.length > 0 ? { droppedPhrases: page.dropped } : {}),
      },
    };
  },
});

/** `clinvar_lookup_accession`: one VCV, RCV or variation id. */
export const clinvarLookupAccessionTool = defineTool({
  id: "lookup_accession",
  title: "Look up a ClinVar record",
  description:
    "Fetch one ClinVar record by VCV accession, RCV accession or variation id (also versioned or as a ClinVar " +
    "URL): name, genes, location, classifications with review status (0-4 stars) and conditions. " +
    "Use get_assertions for the individual submissions.",
  inputShape: {
    accession: z
      .string()
      .trim()
      .min(1)
      .describe(
        "VCV000012345, RCV000012345, a variation id (12345), a versioned accession or a ClinVar URL.",
      ),
  },
  async run(input, { http }) {
    const id = normalizeClinvarId(input.accession) ?? invalidId(input.accession, CLINVAR_ID_FORMS);
    if (id.kind === "rcv") {
      const rcv = parseClinvarRcv(await efetch(http, "clinvar", [id.accession], "clinvarset"));
      if (rcv.accession !== id.accession) {
        throw new ProviderError("not_found", `ClinVar has no record ${id.accession}.`);
      }
      return {
        records: [rcv.record],
        warnings: versionWarnings(id, rcv.version),
        data: {
          accession: rcv.accession,
          ...(rcv.variationId ? { variationId: rcv.variationId } : {}),
          classifications: rcv.classifications,
        },
      };
    }
    const { records } = await summaryRecords(http, [id.variationId]);
    const record = records[0];
    if (!record) throw new ProviderError("not_found", `ClinVar has no variation ${id.accession}.`);
    const versioned = record.primaryCitation.version;
    return {
      records: [record],
      warnings: versionWarnings(id, versioned?.slice(versioned.lastIndexOf(".") + 1)),
      data: { accession: record.identifier, variationId: id.variationId },
    };
  },
});

/**
 * ESummary records of variation ids, in the given order.
 * @param http the clinvar source's HTTP client
 * @param uids variation ids
 * @returns found records and ids without a summary
 * @throws ProviderError from the HTTP layer or a malformed answer
 */
async function summaryRecords(
  http: SourceHttp,
  uids: readonly string[],
): Promise<{ records: McpRecord[]; missing: string[] }> {
  const { items, missing } = await esummary(http, "clinvar", uids);
  const records = uids.flatMap((uid) => {
    const item = items.get(uid);
    return item ? [clinvarSummaryRecord(uid, item)] : [];
  });
  return { records, missing };
}

/**
 * The warning for a versioned request that ClinVar answers with another (the current) version.
 * @param id the requested identifier
 * @param served the version ClinVar returned
 * @returns zero or one warning
 */
export function versionWarnings(id: ClinvarId, served: string | undefined): string[] {
  if (id.version === undefined || served === undefined || String(id.version) === served) return [];
  return [
    `Version ${id.version} of ${id.accession} was asked for; ClinVar serves the current version ${served}.`,
  ];
}
