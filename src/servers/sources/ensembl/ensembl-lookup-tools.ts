/** The Ensembl lookup tools: `lookup_gene` (stable id or symbol) and `lookup_transcript`. */
import { z } from "zod";
import { invalidId } from "../identifiers.js";
import { defaultedInput } from "../input-schemas.js";
import { ProviderError } from "../provider-error.js";
import type { SourceHttp } from "../source-module.js";
import { defineTool } from "../source-module.js";
import {
  type EnsemblStableId,
  isProductionName,
  looksLikeEnsemblId,
  normalizeEnsemblId,
  normalizeSpecies,
} from "./ensembl-ids.js";
import { speciesInput } from "./ensembl-inputs.js";
import { type EnsemblLookupObject, parseEnsemblLookup } from "./ensembl-json.js";
import { ensemblGeneRecord, ensemblTranscriptRecord } from "./ensembl-records.js";

const GENE_FORMS = "an Ensembl gene id (ENSG00000157764, ENSMUSG…, FBgn…) or a gene symbol such as BRAF";
const TRANSCRIPT_FORMS = "an Ensembl transcript id (ENST00000646891, ENSMUST…, FBtr…, optionally versioned)";
/** Gene symbols: letters, digits and the punctuation of real symbols (HLA-A, C1orf112, MT-CO1, H2-K1). */
const SYMBOL = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,39}$/;

/** `ensembl_lookup_gene`: one gene by stable id or symbol, in the requested species. */
export const ensemblLookupGeneTool = defineTool({
  id: "lookup_gene",
  title: "Look up an Ensembl gene",
  description:
    "Look up one gene in Ensembl by stable id (ENSG00000157764, versioned or as an ensembl.org URL) or by symbol " +
    "(BRAF) in a species (default human): location on the current assembly, biotype, description, HGNC id, " +
    "canonical transcript and, unless include_transcripts is false, its transcripts with their proteins.",
  inputShape: {
    gene: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .describe(
        "An Ensembl gene id (ENSG00000157764, ENSG00000157764.13, ENSMUSG…) or a gene symbol (BRAF).",
      ),
    species: speciesInput,
    include_transcripts: defaultedInput(z.boolean(), true).describe(
      "Include the gene's transcripts and proteins (default true).",
    ),
  },
  async run(input, { http }) {
    const species = input.species === undefined ? undefined : normalizeSpecies(input.species);
    const stable = normalizeEnsemblId(input.gene);
    const query = { expand: input.include_transcripts ? 1 : 0 };
    let gene: EnsemblLookupObject;
    if (stable) {
      if (stable.kind !== "gene") invalidId(input.gene, `${GENE_FORMS}; it names a ${stable.kind}`);
      gene = await lookupById(http, stable, species, query, `Ensembl has no gene ${stable.id}`);
    } else {
      if (looksLikeEnsemblId(input.gene) || !SYMBOL.test(input.gene)) invalidId(input.gene, GENE_FORMS);
      const where = species ?? normalizeSpecies(undefined);
      const response = await http.request(
        "rest",
        `/lookup/symbol/${encodeURIComponent(where)}/${encodeURIComponent(input.gene)}`,
        { query, accept: "application/json", acceptStatuses: [400] },
      );
      gene = withSpecies(
        parseEnsemblLookup(response, { notFound: `Ensembl has no gene with that symbol in ${where}.` }),
        where,
      );
    }
    if (gene.object_type !== "Gene") throw new ProviderError("not_found", `Ensembl has no gene ${gene.id}.`);
    const record = ensemblGeneRecord(gene, stable?.version);
    return {
      records: [record],
      warnings: record.warnings,
      data: { species: record.structuredData?.species, lookedUpBy: stable ? "id" : "symbol" },
    };
  },
});

/** `ensembl_lookup_transcript`: one transcript by stable id, with exons and translation. */
export const ensemblLookupTranscriptTool = defineTool({
  id: "lookup_transcript",
  title: "Look up an Ensembl transcript",
  description:
    "Look up one transcript in Ensembl by stable id (ENST00000646891, versioned or as an ensembl.org URL): " +
    "location, biotype, canonical flag, parent gene, exons and translation (protein id and length).",
  inputShape: {
    transcript: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .describe("An Ensembl transcript id: ENST00000646891, ENST00000646891.2, ENSMUST…, FBtr… or its URL."),
    species: speciesInput,
  },
  async run(input, { http }) {
    const species = input.species === undefined ? undefined : normalizeSpecies(input.species);
    const stable = normalizeEnsemblId(input.transcript);
    if (!stable) invalidId(input.transcript, TRANSCRIPT_FORMS);
    if (stable.kind !== "transcript") {
      invalidId(input.transcript, `${TRANSCRIPT_FORMS}; it names a ${stable.kind}`);
    }
    const transcript = await lookupById(
      http,
      stable,
      species,
      { expand: 1 },
      `Ensembl has no transcript ${stable.id}`,
    );
    if (transcript.object_type !== "Transcript") {
      throw new ProviderError("not_found", `Ensembl has no transcript ${stable.id}.`);
    }
    const record = ensemblTranscriptRecord(transcript, stable.version);
    return {
      records: [record],
      warnings: record.warnings,
      data: { species: record.structuredData?.species },
    };
  },
});

async function lookupById(
  http: SourceHttp,
  stable: EnsemblStableId,
  species: string | undefined,
  query: Record<string, number>,
  notFound: string,
): Promise<EnsemblLookupObject> {
  const where = species === undefined ? "" : ` in ${species}`;
  // Versions are checked against the answer instead of sent: Ensembl serves only the current release.
  const response = await http.request("rest", `/lookup/id/${encodeURIComponent(stable.id)}`, {
    query: { ...query, species },
    accept: "application/json",
    acceptStatuses: [400],
  });
  const found = parseEnsemblLookup(response, { notFound: `${notFound}${where}.` });
  // Honour the species even if Ensembl ignored the parameter: an id names a feature of one species only.
  const answered = typeof found.species === "string" ? found.species : "";
  if (
    species !== undefined &&
    isProductionName(species) &&
    isProductionName(answered) &&
    answered !== species
  ) {
    throw new ProviderError("not_found", `${notFound}${where}; it belongs to ${answered}.`);
  }
  return species === undefined ? found : withSpecies(found, species);
}

/** Records link to www.ensembl.org/<Species>/…, which needs the production name, not an alias Ensembl echoes. */
function withSpecies(found: EnsemblLookupObject, requested: string): EnsemblLookupObject {
  const answered = typeof found.species === "string" ? found.species : "";
  if (isProductionName(answered) || !isProductionName(requested)) return found;
  return { ...found, species: requested };
}
