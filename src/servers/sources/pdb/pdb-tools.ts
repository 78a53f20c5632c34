/** The PDB tools: `search_structures`, `lookup_structure` and `prepare_structure_download`. */
import { z } from "zod";
import type { ArtifactCandidate, McpRecord } from "../../../contract/index.js";
import { invalidId } from "../identifiers.js";
import { defaultedInput, maxResultsInput, queryInput, startInput } from "../input-schemas.js";
import { offsetPaging } from "../paging.js";
import { isProviderError, ProviderError } from "../provider-error.js";
import { buildRecord } from "../record-builder.js";
import type { SourceHttp } from "../source-module.js";
import { defineTool } from "../source-module.js";
import { type PdbEntry, parsePdbCoreEntry } from "./pdb-entry-parser.js";
import { normalizePdbId, type PdbId, pdbEntryUrl, pdbFileUrl } from "./pdb-ids.js";
import { describePdbEntries, searchPdbEntries } from "./pdb-search.js";

/** The licence of PDB archive data, also stated on every coordinate-file candidate. */
export const PDB_LICENSE = "CC0-1.0";
const ID_FORMS = "a PDB id (4HHB, pdb_00004hhb, PDB:4HHB or an rcsb.org URL)";
const ID_INPUT = z
  .string()
  .trim()
  .min(1)
  .describe("A PDB id: classic 4HHB, extended pdb_00004hhb, PDB:4HHB, the entry DOI, or an rcsb.org URL.");

/** `pdb_search_structures`: RCSB full-text search → described entry records, with start/max_results paging. */
export const pdbSearchStructuresTool = defineTool({
  id: "search_structures",
  title: "Search PDB structures",
  description:
    "Search experimentally determined 3D structures in the Protein Data Bank (RCSB full-text search) and return " +
    "title, method, resolution, release date, authors and primary citation of each entry. Pages with " +
    "start/max_results.",
  inputShape: {
    query: queryInput(
      "Free text over PDB entries: protein, gene, organism, ligand or author names, e.g. hemoglobin or BRAF V600E.",
    ),
    max_results: maxResultsInput(10, 100),
    start: startInput(99_999),
  },
  async run(input, { http }) {
    const start = input.start ?? 0;
    const page = await searchPdbEntries(http, { query: input.query, start, rows: input.max_results });
    const ids = page.hits.map((hit) => hit.id);
    const described = await describePdbEntries(http, ids);
    const byId = new Map(described.entries.map((entry) => [entry.id, entry.record]));
    const records = page.hits.map((hit) => withScore(byId.get(hit.id) ?? bareRecord(hit.id), hit.score));
    const warnings: string[] = [];
    const missing = ids.filter((id) => !byId.has(id)).length;
    if (missing > 0)
      warnings.push(`${missing} hit(s) had no entry description at RCSB; they carry the id only.`);
    return {
      records,
      warnings,
      data: {
        ...offsetPaging({ total: page.total, start, fetched: page.hits.length, returned: records.length }),
      },
    };
  },
});

/** `pdb_lookup_structure`: one entry by classic or extended id. */
export const pdbLookupStructureTool = defineTool({
  id: "lookup_structure",
  title: "Look up a PDB structure",
  description:
    "Fetch one PDB entry by id (classic 4HHB or extended pdb_00004hhb): title, experimental method, resolution, " +
    "dates, authors, keywords, size, primary citation (DOI, PMID) and whether the legacy PDB format exists.",
  inputShape: { id: ID_INPUT },
  async run(input, { http }) {
    const wanted = normalizePdbId(input.id) ?? invalidId(input.id, ID_FORMS);
    const entry = await fetchCoreEntry(http, wanted);
    return { records: [entry.record], data: { id: entry.id, extendedId: wanted.extendedId } };
  },
});

/** `pdb_prepare_structure_download`: the coordinate-file candidate of one entry (never downloads). */
export const pdbPrepareStructureDownloadTool = defineTool({
  id: "prepare_structure_download",
  title: "Plan a PDB structure download",
  description:
    "Plan the download of a PDB entry's coordinates: confirms the entry and returns a download candidate (HTTPS " +
    "URL on files.rcsb.org, format cif (PDBx/mmCIF) or pdb, CC0 licence) for artifact_download. Large structures " +
    "exist only as cif. Downloads nothing.",
  inputShape: {
    id: ID_INPUT,
    format: defaultedInput(z.enum(["cif", "pdb"]), "cif").describe(
      "cif (PDBx/mmCIF, default; every entry) or pdb (legacy format; not for large structures).",
    ),
  },
  async run(input, { http }) {
    const wanted = normalizePdbId(input.id) ?? invalidId(input.id, ID_FORMS);
    const entry = await fetchCoreEntry(http, wanted);
    if (input.format === "pdb" && !entry.isPdbFormatAvailable) {
      throw new ProviderError(
        "invalid_input",
        `PDB entry ${entry.id} is too large for the legacy PDB format; ask for format cif.`,
      );
    }
    const candidate: ArtifactCandidate = {
      candidateId: `pdb:${entry.id}:${input.format}`,
      sourceId: "pdb",
      sourceRecordId: entry.id,
      url: pdbFileUrl(entry.id, input.format),
      format: input.format,
      kind: "structure",
      license: PDB_LICENSE,
      filename: `${entry.id}.${input.format}`,
    };
    return {
      records: [entry.record],
      artifacts: [candidate],
      data: { id: entry.id, format: input.format },
    };
  },
});

async function fetchCoreEntry(http: SourceHttp, wanted: PdbId): Promise<PdbEntry> {
  try {
    const response = await http.request("data", `/rest/v1/core/entry/${encodeURIComponent(wanted.id)}`, {
      accept: "application/json",
    });
    return parsePdbCoreEntry(response);
  } catch (error) {
    if (isProviderError(error) && error.code === "not_found") {
      throw new ProviderError("not_found", `RCSB PDB has no released entry ${wanted.id}.`, { status: 404 });
    }
    throw error;
  }
}

function bareRecord(id: string): McpRecord {
  return buildRecord({
    source: "pdb",
    identifier: id,
    identifierType: "pdb",
    label: `PDB:${id}`,
    url: pdbEntryUrl(id),
    title: undefined,
    contentScope: "metadata",
  });
}

function withScore(record: McpRecord, score: number | undefined): McpRecord {
  if (score === undefined) return record;
  return { ...record, structuredData: { ...record.structuredData, searchScore: score } };
}
