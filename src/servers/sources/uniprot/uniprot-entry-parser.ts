/**
 * Parses UniProtKB REST list answers (`/uniprotkb/search`, `/uniprotkb/accessions`) into
 * normalized records. Entries are validated with zod; a malformed entry is left out with a warning rather
 * than failing the whole answer.
 */
import { z } from "zod";
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { ProviderError } from "../provider-error.js";
import { parseJsonBody } from "../provider-http.js";
import { buildRecord } from "../record-builder.js";
import type { ProviderAnswer, ProviderResponse } from "../source-module.js";
import { uniprotEntryUrl, uniprotVersionUrl } from "./uniprot-ids.js";
import { sequenceWarnings, uniprotSequenceFacts } from "./uniprot-sequence.js";

/** At most this many PDB cross-references per record, so that a well-studied protein stays readable. */
export const MAX_PDB_REFERENCES = 25;

const value = z.looseObject({ value: z.string() });
const name = z.looseObject({ fullName: value.optional() });
const entrySchema = z.looseObject({
  entryType: z.string().optional(),
  primaryAccession: z.string(),
  secondaryAccessions: z.array(z.string()).optional(),
  uniProtkbId: z.string().optional(),
  inactiveReason: z
    .looseObject({
      inactiveReasonType: z.string().optional(),
      mergeDemergeTo: z.array(z.string()).optional(),
    })
    .optional(),
  proteinDescription: z
    .looseObject({
      /** `Precursor`, `Fragment`, `Fragments`, `Precursor; Fragment`. */
      flag: z.string().optional(),
      recommendedName: name.optional(),
      submissionNames: z.array(name).optional(),
      alternativeNames: z.array(name).optional(),
    })
    .optional(),
  genes: z
    .array(z.looseObject({ geneName: value.optional(), synonyms: z.array(value).optional() }))
    .optional(),
  organism: z
    .looseObject({
      scientificName: z.string().optional(),
      commonName: z.string().optional(),
      taxonId: z.number().optional(),
    })
    .optional(),
  sequence: z.looseObject({ length: z.number().optional() }).optional(),
  comments: z
    .array(
      z.looseObject({
        commentType: z.string().optional(),
        texts: z.array(value).optional(),
        // Read leniently (./uniprot-sequence.ts): an odd isoform or feature must not cost the whole entry.
        isoforms: z.array(z.unknown()).optional(),
      }),
    )
    .optional(),
  features: z.array(z.unknown()).optional(),
  uniProtKBCrossReferences: z
    .array(
      z.looseObject({
        database: z.string(),
        id: z.string(),
        properties: z.array(z.looseObject({ key: z.string(), value: z.string() })).optional(),
      }),
    )
    .optional(),
  proteinExistence: z.string().optional(),
  annotationScore: z.number().optional(),
  entryAudit: z
    .looseObject({
      lastAnnotationUpdateDate: z.string().optional(),
      entryVersion: z.number().optional(),
      sequenceVersion: z.number().optional(),
    })
    .optional(),
});
const facetsSchema = z.array(
  z.looseObject({
    name: z.string(),
    values: z.array(z.looseObject({ value: z.string(), count: z.number() })).optional(),
  }),
);

type UniprotEntryJson = z.infer<typeof entrySchema>;
type UniprotXref = NonNullable<UniprotEntryJson["uniProtKBCrossReferences"]>[number];

/** An active entry and its record. */
export interface UniprotEntry {
  accession: string;
  secondaryAccessions: string[];
  record: McpRecord;
}

/** An accession UniProt keeps only as an inactive (deleted, merged or demerged) entry. */
export interface InactiveUniprotEntry {
  accession: string;
  /** `DELETED`, `MERGED`, `DEMERGED`, ... */
  reason: string;
  /** The accessions it was merged or demerged into. */
  replacedBy: string[];
}

/** A parsed list answer. */
export interface UniprotEntries {
  entries: UniprotEntry[];
  inactive: InactiveUniprotEntry[];
  /** Entries that did not have the documented shape and were left out. */
  malformed: number;
  /** The total of the query, from the `reviewed` facet counts, when the answer carries that facet. */
  facetTotal: number | undefined;
}

/**
 * Parses a `{results: [...]}` answer (search or accessions).
 * @param answer the JSON body, host and status, with the headers when known (they name the UniProt release)
 * @returns active entries with records, inactive accessions, the malformed count and the facet total
 * @throws ProviderError `upstream_unavailable` when the body is not JSON or has no `results` array
 */
export function parseUniprotResults(
  answer: ProviderAnswer & Pick<ProviderResponse, "headers">,
): UniprotEntries {
  const body = parseJsonBody(answer);
  const results = (body as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) throw malformedAnswer(answer);
  const parsed: UniprotEntries = { entries: [], inactive: [], malformed: 0, facetTotal: undefined };
  for (const item of results) {
    const entry = entrySchema.safeParse(item);
    if (!entry.success) parsed.malformed++;
    else addEntry(parsed, entry.data, uniprotReleaseOf(answer.headers));
  }
  const facets = facetsSchema.safeParse((body as { facets?: unknown }).facets);
  const reviewed = facets.success ? facets.data.find((f) => f.name === "reviewed") : undefined;
  // Every entry is either reviewed or unreviewed, so the two counts add up to the query's total.
  if (reviewed?.values) parsed.facetTotal = reviewed.values.reduce((sum, v) => sum + v.count, 0);
  return parsed;
}

/** The UniProt release an answer came from (its `X-UniProt-Release` headers). */
export interface UniprotRelease {
  /** `2024_04`. */
  release?: string;
  /** As UniProt writes it (`24-July-2024`). */
  date?: string;
}

/**
 * The UniProt release named by an answer's headers.
 * @param headers the response headers, when the HTTP layer exposes them
 * @returns the release, or undefined when the answer names none
 */
export function uniprotReleaseOf(headers: Headers | undefined): UniprotRelease | undefined {
  const release = headers?.get("x-uniprot-release")?.trim() || undefined;
  const date = headers?.get("x-uniprot-release-date")?.trim() || undefined;
  if (!release && !date) return undefined;
  return { ...(release ? { release } : {}), ...(date ? { date } : {}) };
}

/**
 * An active entry as a `structured-record` citing the UniSave page of the entry version read, with PDB and
 * AlphaFold cross-references.
 */
function uniprotRecord(entry: UniprotEntryJson, release: UniprotRelease | undefined): McpRecord {
  const accession = entry.primaryAccession.toUpperCase();
  const description = entry.proteinDescription;
  const title =
    description?.recommendedName?.fullName?.value ?? description?.submissionNames?.[0]?.fullName?.value;
  const reviewed = reviewStatus(entry.entryType);
  const xrefs = entry.uniProtKBCrossReferences ?? [];
  const pdb = xrefs.filter((x) => x.database === "PDB");
  const warnings: string[] = [];
  if (reviewed === false) {
    warnings.push("Unreviewed UniProtKB/TrEMBL entry: its annotation is computed, not curated.");
  } else if (reviewed === undefined) {
    warnings.push(
      `UniProt ${entry.entryType ? `gave the entry type "${entry.entryType}"` : "gave no entry type"}: ` +
        "whether this entry is reviewed (Swiss-Prot) or unreviewed (TrEMBL) is unknown.",
    );
  }
  if (pdb.length > MAX_PDB_REFERENCES) {
    warnings.push(`Only the first ${MAX_PDB_REFERENCES} of ${pdb.length} PDB cross-references are listed.`);
  }
  const crossReferences: CrossReference[] = pdb.slice(0, MAX_PDB_REFERENCES).map((x) => ({
    identifier: x.id.toUpperCase(),
    identifierType: "pdb",
    url: `https://www.rcsb.org/structure/${x.id.toUpperCase()}`,
  }));
  if (xrefs.some((x) => x.database === "AlphaFoldDB")) {
    crossReferences.push({
      identifier: accession,
      identifierType: "alphafold",
      url: `https://alphafold.ebi.ac.uk/entry/${accession}`,
    });
  }
  const audit = entry.entryAudit;
  const entryVersion = audit?.entryVersion;
  const sequence = uniprotSequenceFacts(entry);
  warnings.push(...sequenceWarnings(accession, entry.sequence?.length, sequence));
  return buildRecord({
    source: "uniprot",
    identifier: accession,
    identifierType: "uniprot",
    // The entry page shows the current version; UniSave serves the version that was read.
    label:
      entryVersion === undefined
        ? `UniProtKB:${accession}`
        : `UniProtKB:${accession} (entry version ${entryVersion})`,
    url: uniprotEntryUrl(accession),
    ...(entryVersion === undefined
      ? {}
      : { citationVersion: String(entryVersion), citationUrl: uniprotVersionUrl(accession, entryVersion) }),
    title,
    contentScope: "structured-record",
    crossReferences,
    structuredData: compact({
      entryName: entry.uniProtkbId,
      reviewed,
      reviewStatus:
        reviewed === undefined ? "unknown" : reviewed ? "reviewed (Swiss-Prot)" : "unreviewed (TrEMBL)",
      proteinName: title,
      alternativeNames: names(description?.alternativeNames),
      genes: (entry.genes ?? []).flatMap((g) => g.geneName?.value ?? []),
      geneSynonyms: (entry.genes ?? []).flatMap((g) => (g.synonyms ?? []).map((s) => s.value)),
      organism: entry.organism && compact({ ...entry.organism }),
      sequenceLength: entry.sequence?.length,
      ...sequence,
      function: entry.comments
        ?.find((c) => c.commentType === "FUNCTION")
        ?.texts?.map((t) => t.value)
        .join(" "),
      proteinExistence: entry.proteinExistence,
      annotationScore: entry.annotationScore,
      entryVersion,
      sequenceVersion: audit?.sequenceVersion,
      lastUpdated: audit?.lastAnnotationUpdateDate,
      uniprotRelease: release?.release,
      uniprotReleaseDate: release?.date,
      pdbStructureCount: pdb.length,
      pdbStructures: pdb.slice(0, MAX_PDB_REFERENCES).map(pdbStructure),
      secondaryAccessions: entry.secondaryAccessions,
    }),
    warnings,
  });
}

/**
 * Whether an entry is reviewed, from its `entryType`.
 * @returns true for Swiss-Prot, false for TrEMBL, undefined when UniProt did not say (or said something else)
 */
function reviewStatus(entryType: string | undefined): boolean | undefined {
  if (/\(swiss-prot\)/i.test(entryType ?? "")) return true;
  if (/\(trembl\)/i.test(entryType ?? "")) return false;
  return undefined;
}

/** One PDB structure of the entry as UniProt describes it: method, resolution in ångström, chains. */
interface PdbStructure {
  id: string;
  /** `X-ray`, `EM`, `NMR`, ... */
  method?: string;
  /** The resolution; absent for NMR (UniProt writes `-`). */
  resolutionAngstrom?: number;
  /** Chains and the residues of this protein they cover, as UniProt writes them: `A/B=448-723`. */
  chains?: string;
}

function pdbStructure(xref: UniprotXref): PdbStructure {
  const property = (key: string) => xref.properties?.find((p) => p.key === key)?.value.trim();
  const structure: PdbStructure = { id: xref.id.toUpperCase() };
  const method = property("Method");
  if (method && method !== "-") structure.method = method;
  const resolution = /^(\d+(?:\.\d+)?)\s*(?:A|Å)$/i.exec(property("Resolution") ?? "")?.[1];
  if (resolution !== undefined) structure.resolutionAngstrom = Number(resolution);
  const chains = property("Chains");
  if (chains && chains !== "-") structure.chains = chains;
  return structure;
}

function addEntry(
  parsed: UniprotEntries,
  entry: UniprotEntryJson,
  release: UniprotRelease | undefined,
): void {
  const accession = entry.primaryAccession.toUpperCase();
  if (entry.entryType === "Inactive" || entry.inactiveReason) {
    parsed.inactive.push({
      accession,
      reason: entry.inactiveReason?.inactiveReasonType ?? "INACTIVE",
      replacedBy: entry.inactiveReason?.mergeDemergeTo ?? [],
    });
    return;
  }
  parsed.entries.push({
    accession,
    secondaryAccessions: (entry.secondaryAccessions ?? []).map((a) => a.toUpperCase()),
    record: uniprotRecord(entry, release),
  });
}

function names(list: { fullName?: { value: string } | undefined }[] | undefined): string[] {
  return (list ?? []).flatMap((n) => n.fullName?.value ?? []);
}

/** Leaves out undefined values and empty lists, so records carry only what UniProt stated. */
function compact(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(data).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0)),
  );
}

function malformedAnswer(answer: ProviderAnswer): ProviderError {
  return new ProviderError(
    "upstream_unavailable",
    `${answer.host} sent an answer that is not UniProtKB JSON.`,
    {
      status: answer.status,
    },
  );
}
