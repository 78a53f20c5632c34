/** The `pdb` source: the RCSB Protein Data Bank's Search API (search.rcsb.org) and Data API (data.rcsb.org). */
import type { SourceModule } from "../source-module.js";
import {
  PDB_LICENSE,
  pdbLookupStructureTool,
  pdbPrepareStructureDownloadTool,
  pdbSearchStructuresTool,
} from "./pdb-tools.js";

/** The `pdb` source module (manifest: manifests/pdb.json). */
export const pdbSource: SourceModule = {
  id: "pdb",
  attribution: "RCSB Protein Data Bank (RCSB.org), a member of the Worldwide PDB (wwPDB)",
  license: PDB_LICENSE,
  endpoints: [
    { key: "search", defaultBaseUrl: "https://search.rcsb.org/rcsbsearch/v2" },
    { key: "data", defaultBaseUrl: "https://data.rcsb.org" },
  ],
  tools: [pdbSearchStructuresTool, pdbLookupStructureTool, pdbPrepareStructureDownloadTool],
};
