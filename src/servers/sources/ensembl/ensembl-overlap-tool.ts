/** `ensembl_overlap_region`: the features of a region of at most 5 Mb (Ensembl `overlap/region`). */
import { z } from "zod";
import { defaultedInput, maxResultsInput, optionalInput, startInput } from "../input-schemas.js";
import { offsetPaging } from "../paging.js";
import { defineTool } from "../source-module.js";
import { ensemblLocationUrl, normalizeSpecies } from "./ensembl-ids.js";
import { speciesInput } from "./ensembl-inputs.js";
import { parseEnsemblArray } from "./ensembl-json.js";
import { ensemblFeatureRecord } from "./ensembl-records.js";
import { overlapRegion, regionText } from "./ensembl-region.js";

const FEATURES = ["gene", "transcript", "exon", "variation", "structural_variation", "regulatory"] as const;

/** `ensembl_overlap_region`: genes, transcripts, exons, variants or regulatory features of a region. */
export const ensemblOverlapRegionTool = defineTool({
  id: "overlap_region",
  title: "Features overlapping an Ensembl region",
  description:
    "List the Ensembl features (genes by default; or transcripts, exons, variation, structural_variation, " +
    "regulatory) overlapping a genomic region of at most 5 Mb on the current assembly (GRCh38 for human). " +
    "Pages with start/max_results; variation is dense, so keep its regions small.",
  inputShape: {
    region: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .describe("Region as chromosome:start-end, 1-based and at most 5 Mb: 7:140719327-140924928 or chr7:…"),
    species: speciesInput,
    feature: defaultedInput(z.enum(FEATURES), "gene").describe(
      "Feature type: gene (default), transcript, exon, variation, structural_variation or regulatory.",
    ),
    biotype: optionalInput(
      z
        .string()
        .trim()
        .regex(/^[A-Za-z0-9_]{1,60}$/),
    ).describe(
      "Only features of this biotype, for genes and transcripts (protein_coding, lncRNA, miRNA, ...).",
    ),
    max_results: maxResultsInput(50, 200),
    start: startInput(99_999),
  },
  async run(input, { http }) {
    const region = overlapRegion(input.region);
    const species = normalizeSpecies(input.species);
    const notation = regionText(region);
    const response = await http.request(
      "rest",
      `/overlap/region/${encodeURIComponent(species)}/${encodeURIComponent(notation).replace(/%3A/g, ":")}`,
      {
        query: { feature: input.feature, biotype: input.biotype },
        accept: "application/json",
        acceptStatuses: [400],
      },
    );
    const features = parseEnsemblArray(response, {
      notFound: `Ensembl has no sequence region ${region.seqRegion} in ${species}.`,
      invalid: "Ensembl rejected the region or feature type.",
    });
    const start = input.start ?? 0;
    const page = features.slice(start, start + input.max_results);
    const records = page.flatMap((feature) => ensemblFeatureRecord(feature, species) ?? []);
    const warnings: string[] = [];
    if (records.length < page.length) {
      warnings.push(`${page.length - records.length} feature(s) without an id were left out.`);
    }
    return {
      records,
      warnings,
      data: {
        region: notation,
        species,
        feature: input.feature,
        regionUrl: ensemblLocationUrl(species, region.seqRegion, region.start, region.end),
        ...offsetPaging({ total: features.length, start, fetched: page.length, returned: records.length }),
      },
    };
  },
});
