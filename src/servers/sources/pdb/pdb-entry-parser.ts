/**
 * Parses RCSB PDB entry descriptions into normalized records. The Data API's REST core entry
 * (`/rest/v1/core/entry/<id>`) and its GraphQL `entries` query share the mmCIF-derived field names, so one
 * parser serves both; the only spelling difference (`pdbx_database_id_DOI` in GraphQL, `…_doi` in REST) is
 * accepted either way.
 */
import { z } from "zod";
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { ProviderError } from "../provider-error.js";
import { parseJsonBody } from "../provider-http.js";
import { buildRecord, doiReference } from "../record-builder.js";
import type { ProviderAnswer } from "../source-module.js";
import { normalizePdbId, pdbEntryDoi, pdbEntryUrl } from "./pdb-ids.js";

const text = z.string().nullish();
const number = z.number().nullish();
const citationSchema = z.looseObject({
  title: text,
  journal_abbrev: text,
  rcsb_journal_abbrev: text,
  year: number,
  pdbx_database_id_doi: text,
  pdbx_database_id_DOI: text,
  pdbx_database_id_pub_med: number,
  pdbx_database_id_PubMed: number,
});
const entrySchema = z.looseObject({
  rcsb_id: z.string(),
  struct: z.looseObject({ title: text }).nullish(),
  struct_keywords: z.looseObject({ pdbx_keywords: text }).nullish(),
  exptl: z.array(z.looseObject({ method: text })).nullish(),
  audit_author: z.array(z.looseObject({ name: text })).nullish(),
  pdbx_database_status: z.looseObject({ pdb_format_compatible: text }).nullish(),
  rcsb_accession_info: z
    .looseObject({ deposit_date: text, initial_release_date: text, revision_date: text })
    .nullish(),
  rcsb_entry_info: z
    .looseObject({
      resolution_combined: z.array(z.number()).nullish(),
      molecular_weight: number,
      deposited_atom_count: number,
      polymer_entity_count: number,
      experimental_method: text,
    })
    .nullish(),
  rcsb_primary_citation: citationSchema.nullish(),
});

/** One parsed PDB entry. */
export interface PdbEntry {
  /** The normalized id (`4HHB`). */
  id: string;
  /** Whether files.rcsb.org serves the legacy PDB format (large structures are mmCIF-only). */
  isPdbFormatAvailable: boolean;
  record: McpRecord;
}

/**
 * Parses a REST core-entry answer.
 * @param answer the JSON body, host and status
 * @returns the entry
 * @throws ProviderError `upstream_unavailable` when the body is not a PDB entry
 */
export function parsePdbCoreEntry(answer: ProviderAnswer): PdbEntry {
  const entry = entrySchema.safeParse(parseJsonBody(answer));
  const parsed = entry.success ? toEntry(entry.data) : undefined;
  if (!parsed) throw malformed(answer);
  return parsed;
}

/**
 * Parses a GraphQL `entries` answer.
 * @param answer the JSON body, host and status
 * @returns the entries found (ids RCSB does not know are absent) and how many were malformed
 * @throws ProviderError `upstream_unavailable` when the answer has no `data.entries` list (a GraphQL error)
 */
export function parsePdbGraphqlEntries(answer: ProviderAnswer): { entries: PdbEntry[]; malformed: number } {
  const body = parseJsonBody(answer) as { data?: { entries?: unknown } } | null;
  const list = body?.data?.entries;
  if (!Array.isArray(list)) throw malformed(answer);
  const entries: PdbEntry[] = [];
  let malformedCount = 0;
  for (const item of list) {
    if (item === null) continue;
    const entry = entrySchema.safeParse(item);
    const parsed = entry.success ? toEntry(entry.data) : undefined;
    if (parsed) entries.push(parsed);
    else malformedCount++;
  }
  return { entries, malformed: malformedCount };
}

function toEntry(entry: z.infer<typeof entrySchema>): PdbEntry | undefined {
  const pdbId = normalizePdbId(entry.rcsb_id);
  if (!pdbId) return undefined;
  const { id } = pdbId;
  const info = entry.rcsb_entry_info;
  const accession = entry.rcsb_accession_info;
  const citation = entry.rcsb_primary_citation;
  const citationDoi = citation?.pdbx_database_id_DOI ?? citation?.pdbx_database_id_doi ?? undefined;
  const pmid = citation?.pdbx_database_id_PubMed ?? citation?.pdbx_database_id_pub_med ?? undefined;
  const crossReferences: CrossReference[] = [];
  const entryDoi = pdbEntryDoi(id);
  if (entryDoi) crossReferences.push(doiReference(entryDoi));
  if (citationDoi) crossReferences.push(doiReference(citationDoi));
  if (pmid) {
    crossReferences.push({
      identifier: String(pmid),
      identifierType: "pmid",
      url: `https://pubmed.ncbi.nlm.nih.gov/${pmid}/`,
    });
  }
  const methods = (entry.exptl ?? []).flatMap((e) => e.method ?? []);
  const isPdbFormatAvailable = entry.pdbx_database_status?.pdb_format_compatible !== "N";
  const released = accession?.initial_release_date ?? undefined;
  const record = buildRecord({
    source: "pdb",
    identifier: id,
    identifierType: "pdb",
    label: `PDB:${id}`,
    url: pdbEntryUrl(id),
    title: entry.struct?.title ?? undefined,
    authors: (entry.audit_author ?? []).flatMap((a) => a.name ?? []),
    year: released ? Number(released.slice(0, 4)) : undefined,
    contentScope: "structured-record",
    crossReferences,
    structuredData: compact({
      extendedId: pdbId.extendedId,
      experimentalMethods: methods,
      resolutionAngstrom: info?.resolution_combined?.[0],
      // A multi-method entry (X-ray with neutron data, say) has one value per method; keep them all.
      resolutionsAngstrom:
        (info?.resolution_combined?.length ?? 0) > 1 ? info?.resolution_combined : undefined,
      keywords: entry.struct_keywords?.pdbx_keywords,
      depositDate: day(accession?.deposit_date),
      releaseDate: day(released),
      revisionDate: day(accession?.revision_date),
      polymerEntityCount: info?.polymer_entity_count,
      depositedAtomCount: info?.deposited_atom_count,
      molecularWeightKDa: info?.molecular_weight,
      pdbFormatAvailable: isPdbFormatAvailable,
      primaryCitation:
        citation &&
        compact({
          title: citation.title,
          journal: citation.rcsb_journal_abbrev ?? citation.journal_abbrev,
          year: citation.year,
          doi: citationDoi,
          pmid: pmid === undefined ? undefined : String(pmid),
        }),
    }),
  });
  return { id, isPdbFormatAvailable, record };
}

/** `2023-02-01T00:00:00+0000` → `2023-02-01`. */
function day(value: string | null | undefined): string | undefined {
  return value ? value.slice(0, 10) : undefined;
}

/** Leaves out absent values and empty lists, so records carry only what RCSB stated. */
function compact(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(data).filter(
      ([, v]) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0),
    ),
  );
}

function malformed(answer: ProviderAnswer): ProviderError {
  return new ProviderError("upstream_unavailable", `${answer.host} sent an answer that is not a PDB entry.`, {
    status: answer.status,
  });
}
