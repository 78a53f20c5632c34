/** Normalized records of Ensembl genes, transcripts and region features. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { buildRecord } from "../record-builder.js";
import { type EnsemblIdKind, ensemblLocationUrl, ensemblPageUrl, GRCH37 } from "./ensembl-ids.js";
import { type EnsemblLookupObject, isObject, num, str } from "./ensembl-json.js";

/** A genomic location as Ensembl reports it. */
export interface EnsemblLocation {
  seqRegion: string;
  start: number;
  end: number;
  strand: number;
  assembly?: string;
}

/**
 * A gene record from a `lookup` object (with `Transcript` when looked up with `expand=1`).
 * @param gene the lookup object
 * @param requestedVersion the version the user asked for, compared with Ensembl's current one
 * @returns the record (`structured-record`), citing the current version
 */
export function ensemblGeneRecord(gene: EnsemblLookupObject, requestedVersion?: number): McpRecord {
  const species = str(gene.species) ?? "homo_sapiens";
  const version = num(gene.version);
  const assembly = str(gene.assembly_name);
  const { text: description, source } = splitDescription(str(gene.description));
  const symbol = str(gene.display_name);
  const transcripts = Array.isArray(gene.Transcript) ? gene.Transcript.filter(isObject) : undefined;
  const canonicalTranscript = str(gene.canonical_transcript) ?? flaggedCanonical(transcripts);
  const structuredData: Record<string, unknown> = {
    species,
    ...optional({
      symbol,
      description,
      biotype: str(gene.biotype),
      version,
      location: locationOf(gene),
      source: str(gene.source),
      canonicalTranscript,
    }),
  };
  if (transcripts) {
    structuredData.transcriptCount = transcripts.length;
    structuredData.transcripts = transcripts.map(transcriptSummary);
  }
  const crossReferences: CrossReference[] = [];
  if (source) crossReferences.push(source);
  const canonical = canonicalTranscript?.replace(/\.\d+$/, "");
  if (canonical) {
    crossReferences.push({
      identifier: canonical,
      identifierType: "ensembl_transcript",
      url: ensemblPageUrl(species, "transcript", canonical, assembly),
    });
  }
  return buildRecord({
    ...identity(gene.id, "gene", species, version, assembly),
    title: symbol ? `${symbol}${description ? `: ${description}` : ""}` : description,
    crossReferences,
    structuredData,
    warnings: versionWarnings(gene.id, requestedVersion, version),
    contentScope: "structured-record",
  });
}

/**
 * A transcript record from a `lookup` object (with `Exon` and `Translation` when looked up with `expand=1`).
 * @param transcript the lookup object
 * @param requestedVersion the version the user asked for
 * @returns the record (`structured-record`)
 */
export function ensemblTranscriptRecord(
  transcript: EnsemblLookupObject,
  requestedVersion?: number,
): McpRecord {
  const species = str(transcript.species) ?? "homo_sapiens";
  const version = num(transcript.version);
  const assembly = str(transcript.assembly_name);
  const name = str(transcript.display_name);
  const biotype = str(transcript.biotype);
  const parent = str(transcript.Parent);
  const exons = Array.isArray(transcript.Exon) ? transcript.Exon.filter(isObject) : undefined;
  const translation = isObject(transcript.Translation) ? transcript.Translation : undefined;
  const structuredData: Record<string, unknown> = {
    species,
    ...optional({
      name,
      biotype,
      version,
      location: locationOf(transcript),
      isCanonical: typeof transcript.is_canonical === "number" ? transcript.is_canonical === 1 : undefined,
      gene: parent,
      source: str(transcript.source),
      translation: translation ? translationSummary(translation) : undefined,
    }),
  };
  if (exons) {
    structuredData.exonCount = exons.length;
    structuredData.exons = exons.map((exon) => ({ id: str(exon.id), ...optional(locationOf(exon) ?? {}) }));
  }
  const crossReferences: CrossReference[] = [];
  if (parent) {
    crossReferences.push({
      identifier: parent,
      identifierType: "ensembl_gene",
      url: ensemblPageUrl(species, "gene", parent, assembly),
    });
  }
  const protein = translation ? str(translation.id) : undefined;
  if (protein) crossReferences.push({ identifier: protein, identifierType: "ensembl_protein" });
  const kind = [biotype?.replace(/_/g, " "), "transcript"].filter(Boolean).join(" ");
  return buildRecord({
    ...identity(transcript.id, "transcript", species, version, assembly),
    title: `${name ?? transcript.id}: ${kind}${parent ? ` of ${parent}` : ""}`,
    crossReferences,
    structuredData,
    warnings: versionWarnings(transcript.id, requestedVersion, version),
    contentScope: "structured-record",
  });
}

/**
 * A record of one feature of an `overlap/region` answer (gene, transcript, exon, variation, regulatory
 * feature, structural variant).
 * @param feature the overlap item
 * @param species the production name of the region's species
 * @returns the record, or undefined for an item without an id
 */
export function ensemblFeatureRecord(
  feature: Record<string, unknown>,
  species: string,
): McpRecord | undefined {
  const id = str(feature.id);
  const type = str(feature.feature_type) ?? "feature";
  if (!id) return undefined;
  const location = locationOf(feature);
  const assembly = location?.assembly;
  const kind = FEATURE_KINDS[type];
  const url =
    kind !== undefined && kind !== "exon"
      ? ensemblPageUrl(species, kind, id, assembly)
      : location
        ? ensemblLocationUrl(species, location.seqRegion, location.start, location.end, assembly)
        : ensemblPageUrl(species, "exon", id, assembly);
  const name = str(feature.external_name);
  const description = splitDescription(str(feature.description)).text;
  const label = str(feature.consequence_type) ?? str(feature.biotype) ?? description;
  const structuredData: Record<string, unknown> = {
    featureType: type,
    species,
    ...optional({
      name,
      description,
      biotype: str(feature.biotype),
      version: num(feature.version),
      location,
      parent: str(feature.Parent),
      canonicalTranscript: str(feature.canonical_transcript),
      isCanonical: typeof feature.is_canonical === "number" ? feature.is_canonical === 1 : undefined,
      consequence: str(feature.consequence_type),
      alleles: Array.isArray(feature.alleles) ? feature.alleles : undefined,
      clinicalSignificance:
        Array.isArray(feature.clinical_significance) && feature.clinical_significance.length > 0
          ? feature.clinical_significance
          : undefined,
      source: str(feature.source),
    }),
  };
  return buildRecord({
    source: "ensembl",
    identifier: id,
    identifierType: kind === "variation" ? "variant" : `ensembl_${type}`,
    label: `Ensembl:${id}`,
    url,
    title: [name ?? id, label].filter(Boolean).join(": "),
    structuredData,
    contentScope: "structured-record",
  });
}

const FEATURE_KINDS: Record<string, EnsemblIdKind | "variation" | "structural_variation"> = {
  gene: "gene",
  transcript: "transcript",
  exon: "exon",
  regulatory: "regulatory",
  variation: "variation",
  structural_variation: "structural_variation",
};

/**
 * The location fields of an Ensembl object.
 * @param value a lookup, overlap or VEP object
 * @returns the location, or undefined when incomplete
 */
export function locationOf(value: Record<string, unknown>): EnsemblLocation | undefined {
  const seqRegion = str(value.seq_region_name);
  const start = num(value.start);
  const end = num(value.end);
  if (seqRegion === undefined || start === undefined || end === undefined) return undefined;
  const location: EnsemblLocation = { seqRegion, start, end, strand: num(value.strand) ?? 0 };
  const assembly = str(value.assembly_name);
  if (assembly) location.assembly = assembly;
  return location;
}

/**
 * The identity of a looked-up record. The label names the unversioned id because its link, www.ensembl.org,
 * always shows the current release (the one the REST API serves): the version that was read is the citation's
 * `version` and `structuredData.version`, not a claim of the link. A GRCh37 answer links to grch37.ensembl.org.
 */
function identity(
  id: string,
  kind: EnsemblIdKind,
  species: string,
  version: number | undefined,
  assembly: string | undefined,
) {
  const record = {
    source: "ensembl",
    identifier: id,
    identifierType: `ensembl_${kind}`,
    label: assembly === GRCH37 ? `Ensembl (GRCh37):${id}` : `Ensembl:${id}`,
    url: ensemblPageUrl(species, kind, id, assembly),
  };
  return version === undefined ? record : { ...record, citationVersion: String(version) };
}

/**
 * The canonical transcript as the transcripts of an `expand=1` lookup flag it (`is_canonical: 1`), for answers
 * whose gene does not name it in `canonical_transcript`.
 * @returns the versioned id (`ENST00000646891.1`), or undefined when no single transcript is flagged
 */
function flaggedCanonical(transcripts: Record<string, unknown>[] | undefined): string | undefined {
  const flagged = (transcripts ?? []).filter((t) => t.is_canonical === 1 && str(t.id));
  if (flagged.length !== 1 || !flagged[0]) return undefined;
  const id = str(flagged[0].id);
  const version = num(flagged[0].version);
  return version === undefined ? id : `${id}.${version}`;
}

function versionWarnings(id: string, requested: number | undefined, current: number | undefined): string[] {
  if (requested === undefined || current === undefined || requested === current) return [];
  return [
    `${id}.${requested} was asked for; Ensembl serves only the current release, where it is ${id}.${current}.`,
  ];
}

/** Splits `B-Raf proto-oncogene [Source:HGNC Symbol;Acc:HGNC:1097]` into text and a cross-reference. */
function splitDescription(description: string | undefined): { text?: string; source?: CrossReference } {
  if (!description) return {};
  const match = /^(.*?)\s*\[Source:([^;\]]+);Acc:([^\]]+)\]\s*$/.exec(description);
  if (!match) return { text: description };
  const [, text = "", sourceName = "", accession = ""] = match;
  const type = sourceName
    .replace(/\s*Symbol$/i, "")
    .trim()
    .toLowerCase()
    .replace(/\W+/g, "_");
  const source: CrossReference = { identifier: accession, identifierType: type };
  if (/^HGNC:\d+$/.test(accession)) {
    source.url = `https://www.genenames.org/data/gene-symbol-report/#!/hgnc_id/${accession}`;
  }
  return text ? { text, source } : { source };
}

function transcriptSummary(transcript: Record<string, unknown>): Record<string, unknown> {
  const translation = isObject(transcript.Translation) ? transcript.Translation : undefined;
  return {
    id: str(transcript.id),
    ...optional({
      version: num(transcript.version),
      name: str(transcript.display_name),
      biotype: str(transcript.biotype),
      isCanonical: typeof transcript.is_canonical === "number" ? transcript.is_canonical === 1 : undefined,
      start: num(transcript.start),
      end: num(transcript.end),
      exonCount: Array.isArray(transcript.Exon) ? transcript.Exon.length : undefined,
      translation: translation ? translationSummary(translation) : undefined,
    }),
  };
}

function translationSummary(translation: Record<string, unknown>): Record<string, unknown> {
  return {
    id: str(translation.id),
    ...optional({
      length: num(translation.length),
      start: num(translation.start),
      end: num(translation.end),
    }),
  };
}

/** The entries whose value is defined (so that absent facts are absent, not null). */
function optional(values: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
}
