/** The `uniprot` source: UniProtKB through the UniProt REST API (rest.uniprot.org). */
import type { SourceModule } from "../source-module.js";
import { UNIPROT_LICENSE, uniprotLookupTool, uniprotPrepareSequenceTool } from "./uniprot-lookup-tools.js";
import { uniprotSearchTool } from "./uniprot-search-tool.js";

/** The `uniprot` source module (manifest: manifests/uniprot.json). */
export const uniprotSource: SourceModule = {
  id: "uniprot",
  attribution: "UniProt Consortium, UniProtKB (www.uniprot.org)",
  license: UNIPROT_LICENSE,
  endpoints: [{ key: "rest", defaultBaseUrl: "https://rest.uniprot.org" }],
  tools: [uniprotSearchTool, uniprotLookupTool, uniprotPrepareSequenceTool],
};
