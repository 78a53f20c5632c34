/** `ensembl_variant_consequence`: the Variant Effect Predictor (VEP) for one variant. */
import { z } from "zod";
import { invalidId } from "../identifiers.js";
import { defaultedInput } from "../input-schemas.js";
import { ProviderError } from "../provider-error.js";
import { defineTool } from "../source-module.js";
import { DEFAULT_SPECIES, GRCH37, normalizeSpecies } from "./ensembl-ids.js";
import { speciesInput } from "./ensembl-inputs.js";
import { parseVepAnswer, parseVepVariant } from "./ensembl-vep-parser.js";

const VARIANT_FORMS =
  "a variant in HGVS (ENST00000646891.2:c.1799T>A, 7:g.140753336A>T), VEP region (7:140753336-140753336:1/T) " +
  "or id (rs113488022) notation";

/** `ensembl_variant_consequence`: predicted consequences of one variant on transcripts, proteins and regulation. */
export const ensemblVariantConsequenceTool = defineTool({
  id: "variant_consequence",
  title: "Predict a variant's consequences (Ensembl VEP)",
  description:
    "Predict the consequences of one variant with Ensembl's Variant Effect Predictor (VEP) on GRCh38 (the " +
    "current assembly) or, for human, GRCh37: most severe consequence, per-transcript consequence terms, impact, HGVS c./p. notation, amino " +
    "acid change, SIFT and PolyPhen, and known co-located variants (rsIDs, ClinVar significance, frequencies). " +
    "Accepts HGVS (ENST00000646891.2:c.1799T>A, 7:g.140753336A>T), region/allele (7:140753336-140753336:1/T) " +
    "or a variant id (rs113488022).",
  inputShape: {
    variant: z
      .string()
      .trim()
      .min(1)
      .max(300)
      .describe(
        "HGVS (7:g.140753336A>T, ENST00000646891.2:c.1799T>A), region/allele (7:140753336-140753336:1/T) or rs id.",
      ),
    species: speciesInput,
    canonical_only: defaultedInput(z.boolean(), false).describe(
      "Keep only the canonical transcript's consequences (default false: all transcripts).",
    ),
    assembly: defaultedInput(z.enum(["GRCh38", "GRCh37"]), "GRCh38").describe(
      "Human genome assembly of the variant's coordinates: GRCh38 (default, the current Ensembl release) or " +
        "GRCh37 (Ensembl's GRCh37 service; human only).",
    ),
  },
  async run(input, { http }) {
    const variant = parseVepVariant(input.variant) ?? invalidId(input.variant, VARIANT_FORMS);
    const species = normalizeSpecies(input.species);
    if (input.assembly === GRCH37 && species !== DEFAULT_SPECIES) {
      throw new ProviderError(
        "invalid_input",
        "Ensembl serves GRCh37 for human only; leave the assembly unset.",
      );
    }
    const path =
      variant.form === "region"
        ? `/vep/${species}/region/${pathPart(variant.region)}/${pathPart(variant.allele)}`
        : `/vep/${species}/${variant.form}/${pathPart(variant.notation)}`;
    const response = await http.request(input.assembly === GRCH37 ? "rest-grch37" : "rest", path, {
      // HGVS and canonical/MANE flags make the transcript predictions citable.
      query: { hgvs: 1, canonical: 1, mane: 1 },
      accept: "application/json",
      acceptStatuses: [400],
    });
    const records = parseVepAnswer(response, { species, canonicalOnly: input.canonical_only, variant });
    if (records.length === 0) {
      throw new ProviderError("not_found", "Ensembl VEP returned no annotation for the variant.");
    }
    const warnings: string[] = [];
    if (input.canonical_only && records.some((r) => emptyConsequences(r.structuredData))) {
      warnings.push(
        "No canonical transcript is affected; rerun with canonical_only false to see all transcripts.",
      );
    }
    return {
      records,
      warnings,
      data: {
        variant: variant.notation,
        form: variant.form,
        species,
        assembly: records[0]?.structuredData?.assembly ?? input.assembly,
        returned: records.length,
      },
    };
  },
});

function pathPart(value: string): string {
  // VEP reads ':' literally in region and HGVS notation; everything else is escaped.
  return encodeURIComponent(value).replace(/%3A/g, ":");
}

function emptyConsequences(data: Record<string, unknown> | undefined): boolean {
  return Array.isArray(data?.transcriptConsequences) && data.transcriptConsequences.length === 0;
}
