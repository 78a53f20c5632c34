/** The GEO query tools: `search_studies` and `lookup_accession`. */
import { z } from "zod";
import type { McpRecord } from "../../../contract/index.js";
import { invalidId } from "../identifiers.js";
import { maxResultsInput, optionalInput, queryInput, startInput } from "../input-schemas.js";
import { esummary } from "../ncbi/esummary.js";
import { esearch, widenedSearchWarnings } from "../ncbi/eutils.js";
import { offsetPaging } from "../paging.js";
import { defineTool } from "../source-module.js";
import { GEO_ID_FORMS, normalizeGeoAccession } from "./geo-accessions.js";
import { fetchGeoRecord } from "./geo-files.js";
import { geoSummaryRecord } from "./geo-summary-parser.js";

/** Deepest ESearch offset offered; db=gds holds a few million records. */
const GEO_MAX_START = 999_999;

/** The `accession` input shared by the GEO tools. */
export const geoAccessionInput = z
  .string()
  .trim()
  .min(1)
  .describe(
    "A GEO accession: GSE236084, GSM7518067, GPL24247 or GDS507 (any case), or a GEO page or FTP URL.",
  );

/** `geo_search_studies`: ESearch on db=gds restricted to one record type, then ESummary of the hits. */
export const geoSearchStudiesTool = defineTool({
  id: "search_studies",
  title: "Search GEO studies",
  description:
    "Search the Gene Expression Omnibus (GEO) for functional-genomics studies (series, GSE) or, with entry_type, " +
    "curated datasets (GDS), platforms (GPL) or samples (GSM); returns title, summary, study type, organisms, " +
    "platforms, sample count, publication date, PubMed ids and BioProject. Pages with start/max_results.",
  inputShape: {
    query: queryInput(
      "GEO query; Entrez syntax works (e.g. lung metastasis AND single cell; field tags such as [DESC], [GPL]).",
    ),
    entry_type: optionalInput(z.enum(["gse", "gds", "gpl", "gsm"])).describe(
      "Record type: gse (series, the default), gds (curated datasets), gpl (platforms) or gsm (samples).",
    ),
    organism: optionalInput(z.string().trim().min(1).max(200)).describe(
      "Only records of this organism (scientific name, e.g. Homo sapiens).",
    ),
    max_results: maxResultsInput(20, 100),
    start: startInput(GEO_MAX_START),
  },
  async run(input, { http }) {
    const start = input.start ?? 0;
    const filters = [`${input.entry_type ?? "gse"}[ETYP]`];
    // Quotes would end the phrase early; an organism name never needs them.
    if (input.organism) filters.push(`"${input.organism.replace(/"/g, "")}"[ORGN]`);
    const term = `(${input.query}) AND ${filters.join(" AND ")}`;
    const page = await esearch(http, { db: "gds", term, start, max: input.max_results });
    const { items, missing } = await esummary(http, "gds", page.ids);
    const records: McpRecord[] = [];
    let unreadable = 0;
    for (const uid of page.ids) {
      const item = items.get(uid);
      const record = item ? geoSummaryRecord(item) : undefined;
      if (record) records.push(record);
      else if (item) unreadable++;
    }
    const warnings = widenedSearchWarnings(page, "GEO");
    if (missing.length > 0) warnings.push(`${missing.length} hit(s) had no GEO summary and are left out.`);
    if (unreadable > 0) warnings.push(`${unreadable} hit(s) had no valid GEO accession and are left out.`);
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

/** `geo_lookup_accession`: one GSE, GSM, GPL or GDS record. */
export const geoLookupAccessionTool = defineTool({
  id: "lookup_accession",
  title: "Look up a GEO record",
  description:
    "Fetch one GEO record by accession (GSE series, GSM sample, GPL platform or GDS dataset): title, summary, " +
    "study type, organisms, platforms, related series, samples, supplementary file types, PubMed ids and " +
    "BioProject. Use list_files for its downloadable files.",
  inputShape: { accession: geoAccessionInput },
  async run(input, { http }) {
    const id = normalizeGeoAccession(input.accession) ?? invalidId(input.accession, GEO_ID_FORMS);
    const record = await fetchGeoRecord(http, id);
    return { records: [record], data: { accession: id.accession, entryType: id.type } };
  },
});
