/**
 * Variant notations the Variant Effect Predictor (VEP) accepts, and the records of its answers: one
 * `analysis-result` record per variant with its most severe consequence and per-transcript predictions.
 */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { buildRecord } from "../record-builder.js";
import type { ProviderAnswer } from "../source-module.js";
import { ensemblLocationUrl, ensemblPageUrl, ensemblSite, GRCH37, speciesPath } from "./ensembl-ids.js";
import { isObject, num, parseEnsemblArray, str } from "./ensembl-json.js";
import { locationOf } from "./ensembl-records.js";
import { parseRegion, regionText } from "./ensembl-region.js";

/** A variant as VEP's REST endpoints take it. */
export type VepVariant =
  | { form: "hgvs"; notation: string }
  | { form: "id"; notation: string }
  | { form: "region"; notation: string; region: string; allele: string };

/** How many PubMed references of co-located variants are kept per variant. */
const MAX_PUBMED_REFERENCES = 20;
const HGVS = /^[A-Za-z0-9_.-]{1,60}(?:\([A-Za-z0-9_.-]{1,40}\))?:[cgmnpr]\.[A-Za-z0-9_.+*>?()[\];=-]{2,200}$/;
const VARIANT_ID = /^(?:rs\d{1,12}|COSV\d{1,12}|COSM\d{1,12})$/i;
const ALLELE = /^(?:[ACGTN]{1,200}|-)$/i;

/**
 * Recognizes a variant notation: HGVS (`ENST00000646891.2:c.1799T>A`, `7:g.140753336A>T`,
 * `NM_004333.6:c.1799T>A`), a variant id (`rs113488022`), or VEP's region form
 * (`7:140753336-140753336:1/T`, `7:140753336-140753336/T`).
 * @param value user input
 * @returns the variant, or undefined when it is none of these
 */
export function parseVepVariant(value: string): VepVariant | undefined {
  const text = value.trim();
  if (VARIANT_ID.test(text)) return { form: "id", notation: text.replace(/^rs/i, "rs") };
  const slash = text.lastIndexOf("/");
  if (slash > 0) {
    const region = parseRegion(text.slice(0, slash));
    const allele = text.slice(slash + 1).toUpperCase();
    if (region && ALLELE.test(allele)) {
      const withStrand = regionText({ ...region, strand: region.strand ?? 1 });
      return { form: "region", notation: `${withStrand}/${allele}`, region: withStrand, allele };
    }
    return undefined;
  }
  return HGVS.test(text) ? { form: "hgvs", notation: text.replace(/^chr/i, "") } : undefined;
}

/** How a VEP answer is read. */
export interface VepReadOptions {
  /** The production name used for the request. */
  species: string;
  /** Keep only the canonical transcript's consequences. @default false */
  canonicalOnly?: boolean;
  /** The requested variant: its notation becomes the identifier (VEP rewrites region input). */
  variant?: VepVariant;
}

const IDENTIFIER_TYPES: Record<VepVariant["form"], string> = {
  hgvs: "hgvs",
  id: "variant",
  region: "region_allele",
};

/**
 * Parses a VEP answer into records.
 * @param answer the provider answer (HTTP 400 accepted)
 * @param options species, canonical filter and the requested variant
 * @returns one record per annotated variant
 * @throws ProviderError `not_found` (unknown variant id or transcript), `invalid_input` (notation rejected,
 *   reference mismatch), `upstream_unavailable` (malformed answer)
 */
export function parseVepAnswer(answer: ProviderAnswer, options: VepReadOptions): McpRecord[] {
  const results = parseEnsemblArray(answer, {
    notFound: "Ensembl does not know this variant, or the sequence it refers to.",
    invalid: "Ensembl VEP could not annotate the variant (check the notation and the reference allele).",
  });
  return results.map((result) => vepRecord(result, options));
}

function vepRecord(result: Record<string, unknown>, options: VepReadOptions): McpRecord {
  const { species, variant } = options;
  const input = variant?.notation ?? str(result.input) ?? str(result.id) ?? "variant";
  const location = locationOf(result);
  const allConsequences = Array.isArray(result.transcript_consequences)
    ? result.transcript_consequences.filter(isObject)
    : [];
  const consequences = options.canonicalOnly
    ? allConsequences.filter((c) => c.canonical === 1)
    : allConsequences;
  const colocated = Array.isArray(result.colocated_variants)
    ? result.colocated_variants.filter(isObject)
    : [];
  const rsIds = [
    ...new Set(colocated.flatMap((v) => (/^rs\d+$/.test(str(v.id) ?? "") ? [str(v.id) as string] : []))),
  ];
  const form = variant?.form ?? parseVepVariant(input)?.form ?? "hgvs";
  const isId = /^rs\d+$/i.test(input);
  const variantName = isId ? input : rsIds[0];
  // The answer says which assembly it was computed on; its links must open that assembly's site.
  const assembly = str(result.assembly_name);
  const url = variantName
    ? ensemblPageUrl(species, "variation", variantName, assembly)
    : location
      ? ensemblLocationUrl(species, location.seqRegion, location.start, location.end, assembly)
      : `${ensemblSite(species, assembly)}/${speciesPath(species)}/Tools/VEP`;
  const mostSevere = str(result.most_severe_consequence);
  const genes = [...new Set(consequences.flatMap((c) => str(c.gene_symbol) ?? []))];
  const structuredData: Record<string, unknown> = {
    input,
    species,
    ...(assembly ? { assembly } : {}),
    transcriptConsequenceCount: allConsequences.length,
    transcriptConsequences: consequences.map(transcriptConsequence),
    colocatedVariants: colocated.map(colocatedVariant),
  };
  for (const [key, value] of Object.entries({
    mostSevereConsequence: mostSevere,
    alleleString: str(result.allele_string),
    variantClass: str(result.variant_class),
    location,
  })) {
    if (value !== undefined) structuredData[key] = value;
  }
  const regulatory = Array.isArray(result.regulatory_feature_consequences)
    ? result.regulatory_feature_consequences.length
    : 0;
  if (regulatory > 0) structuredData.regulatoryFeatureConsequenceCount = regulatory;
  return buildRecord({
    source: "ensembl",
    identifier: input,
    identifierType: IDENTIFIER_TYPES[form],
    label: assembly === GRCH37 ? `Ensembl VEP (GRCh37):${input}` : `Ensembl VEP:${input}`,
    url,
    title: `${input}: ${mostSevere ?? "no predicted consequence"}${genes.length > 0 ? ` in ${genes.join(", ")}` : ""}`,
    crossReferences: crossReferences(species, consequences, colocated, rsIds, assembly),
    structuredData,
    contentScope: "analysis-result",
  });
}

function transcriptConsequence(c: Record<string, unknown>): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    transcriptId: str(c.transcript_id),
    consequenceTerms: Array.isArray(c.consequence_terms) ? c.consequence_terms : [],
    canonical: c.canonical === 1,
  };
  const fields: Record<string, unknown> = {
    geneId: str(c.gene_id),
    geneSymbol: str(c.gene_symbol),
    impact: str(c.impact),
    biotype: str(c.biotype),
    hgvsc: str(c.hgvsc),
    hgvsp: str(c.hgvsp),
    aminoAcids: str(c.amino_acids),
    codons: str(c.codons),
    proteinStart: num(c.protein_start),
    proteinEnd: num(c.protein_end),
    maneSelect: str(c.mane_select),
    sift: str(c.sift_prediction),
    siftScore: num(c.sift_score),
    polyphen: str(c.polyphen_prediction),
    polyphenScore: num(c.polyphen_score),
  };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) entry[key] = value;
  return entry;
}

function colocatedVariant(v: Record<string, unknown>): Record<string, unknown> {
  const entry: Record<string, unknown> = { id: str(v.id) };
  if (str(v.allele_string)) entry.alleleString = str(v.allele_string);
  if (Array.isArray(v.clin_sig) && v.clin_sig.length > 0) entry.clinicalSignificance = v.clin_sig;
  if (v.somatic === 1) entry.somatic = true;
  if (isObject(v.frequencies)) entry.frequencies = v.frequencies;
  return entry;
}

function crossReferences(
  species: string,
  consequences: Record<string, unknown>[],
  colocated: Record<string, unknown>[],
  rsIds: string[],
  assembly: string | undefined,
): CrossReference[] {
  const references: CrossReference[] = rsIds.map((id) => ({
    identifier: id,
    identifierType: "variant",
    url: ensemblPageUrl(species, "variation", id, assembly),
  }));
  for (const v of colocated) {
    const id = str(v.id);
    if (id && /^COS[VM]\d+$/.test(id)) references.push({ identifier: id, identifierType: "cosmic" });
  }
  const genes = new Set(consequences.flatMap((c) => str(c.gene_id) ?? []));
  for (const gene of genes) {
    references.push({
      identifier: gene,
      identifierType: "ensembl_gene",
      url: ensemblPageUrl(species, "gene", gene, assembly),
    });
  }
  const pmids = new Set(colocated.flatMap((v) => (Array.isArray(v.pubmed) ? v.pubmed.map(String) : [])));
  for (const pmid of [...pmids].filter((p) => /^\d+$/.test(p)).slice(0, MAX_PUBMED_REFERENCES)) {
    references.push({
      identifier: pmid,
      identifierType: "pmid",
      url: `https://pubmed.ncbi.nlm.nih.gov/${pmid}/`,
    });
  }
  return references;
}
