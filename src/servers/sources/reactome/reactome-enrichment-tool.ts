/** `reactome_enrichment`: over-representation analysis of an identifier list (Reactome AnalysisService). */
import { z } from "zod";
import { defaultedInput, maxResultsInput, optionalInput } from "../input-schemas.js";
import { ProviderError } from "../provider-error.js";
import type { SourceHttp } from "../source-module.js";
import { defineTool } from "../source-module.js";
import { parseReactomeAnalysis, parseReactomeNotFound } from "./reactome-analysis-parser.js";

/** Gene symbols, UniProt/Ensembl/ChEBI/miRBase/NCBI ids: no spaces, no list separators. */
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,63}$/;
/** Reactome tokens are URL-encoded base64. */
const TOKEN = /^[A-Za-z0-9%_=+-]{1,200}$/;
const MAX_IDENTIFIERS = 2000;

/** `reactome_enrichment`: which Reactome pathways are over-represented in a list of genes or molecules. */
export const reactomeEnrichmentTool = defineTool({
  id: "enrichment",
  title: "Reactome pathway enrichment",
  description:
    "Over-representation analysis in Reactome: which pathways are enriched in a list of genes, proteins or " +
    "small molecules (gene symbols, UniProt, Ensembl, ChEBI, miRBase ids). Returns pathways sorted by p-value " +
    "with found/total entities, p-value and FDR; unrecognised identifiers are listed in data.failed. " +
    "Non-human identifiers are projected to human by default. Pages with page/max_results.",
  inputShape: {
    identifiers: z
      .array(z.string().trim().min(1))
      .min(1)
      .max(MAX_IDENTIFIERS)
      .describe(
        `Identifiers to analyse (1-${MAX_IDENTIFIERS}): TP53, P04637, ENSG00000141510, CHEBI:15377, ...`,
      ),
    project_to_human: defaultedInput(z.boolean(), true).describe(
      "Project non-human identifiers to their human orthologues' pathways (default true).",
    ),
    include_interactors: defaultedInput(z.boolean(), false).describe(
      "Also count IntAct interactors of the submitted molecules (default false).",
    ),
    include_disease: defaultedInput(z.boolean(), true).describe("Include disease pathways (default true)."),
    p_value_max: optionalInput(z.number().gt(0).max(1)).describe(
      "Only pathways with an entities p-value at or below this threshold (0-1, default 1).",
    ),
    max_results: maxResultsInput(20, 100),
    page: optionalInput(z.number().int().min(1).max(1000)).describe(
      "Page of pathways to return (1-based, default 1); pass data.nextPage of the previous page.",
    ),
  },
  async run(input, { http }) {
    const failed: { id: string; reason: string }[] = [];
    const submitted: string[] = [];
    for (const raw of input.identifiers) {
      if (!IDENTIFIER.test(raw)) failed.push({ id: raw, reason: "invalid_id" });
      else if (!submitted.some((id) => id.toLowerCase() === raw.toLowerCase())) submitted.push(raw);
    }
    if (submitted.length === 0) {
      throw new ProviderError(
        "invalid_id",
        "None of the identifiers is a gene, protein or molecule identifier.",
      );
    }
    const page = input.page ?? 1;
    const response = await http.request(
      "analysis",
      input.project_to_human ? "/identifiers/projection" : "/identifiers/",
      {
        method: "POST",
        body: `${submitted.join("\n")}\n`,
        contentType: "text/plain",
        accept: "application/json",
        query: {
          interactors: String(input.include_interactors),
          includeDisease: String(input.include_disease),
          pValue: input.p_value_max,
          pageSize: input.max_results,
          page,
          sortBy: "ENTITIES_PVALUE",
          order: "ASC",
          resource: "TOTAL",
        },
        acceptStatuses: [404],
      },
    );
    // Reactome answers a list in which it recognises nothing with HTTP 404.
    const analysis = response.status === 404 ? undefined : parseReactomeAnalysis(response);
    if (!analysis || (analysis.identifiersNotFound >= submitted.length && analysis.pathwaysFound === 0)) {
      throw new ProviderError(
        "not_found",
        `Reactome recognised none of the ${submitted.length} submitted identifier(s).`,
        { status: response.status },
      );
    }
    const warnings = analysis.warnings.filter((w) => !/missing header/i.test(w));
    if (analysis.identifiersNotFound > 0) {
      const missing = await notFoundIdentifiers(http, analysis.token, analysis.identifiersNotFound);
      if (missing) {
        for (const id of missing) {
          const original = submitted.find((s) => s.toLowerCase() === id.toLowerCase()) ?? id;
          failed.push({ id: original, reason: "not_found" });
        }
      } else {
        warnings.push(`${analysis.identifiersNotFound} identifier(s) were not recognised by Reactome.`);
      }
    }
    if (failed.length > 0) {
      warnings.push(`${failed.length} of ${input.identifiers.length} identifier(s) failed; see data.failed.`);
    }
    const shown = (page - 1) * input.max_results + analysis.records.length;
    const hasMore = analysis.records.length > 0 && shown < analysis.pathwaysFound;
    const data: Record<string, unknown> = {
      total: analysis.pathwaysFound,
      page,
      returned: analysis.records.length,
      hasMore,
      ...(hasMore ? { nextPage: page + 1 } : {}),
      submitted: submitted.length,
      identifiersNotFound: analysis.identifiersNotFound,
      failed,
      projectedToHuman: analysis.projection ?? input.project_to_human,
    };
    if (analysis.token && TOKEN.test(analysis.token)) {
      data.analysisToken = analysis.token;
      // Reactome keeps the stored result for 7 days; the link opens it in the pathway browser.
      data.analysisUrl = `https://reactome.org/PathwayBrowser/#/DTAB=AN&ANALYSIS=${analysis.token}`;
    }
    return { records: analysis.records, warnings, data };
  },
});

async function notFoundIdentifiers(
  http: SourceHttp,
  token: string | undefined,
  count: number,
): Promise<string[] | undefined> {
  if (!token || !TOKEN.test(token)) return undefined;
  // The token is already URL-encoded by Reactome; encoding it again would break it.
  const response = await http.request("analysis", `/token/${token}/notFound`, {
    query: { pageSize: Math.min(count, 10_000), page: 1 },
    accept: "application/json",
  });
  return parseReactomeNotFound(response);
}
