/**
 * The `biorxiv` and `medrxiv` sources: one module factory over the shared bioRxiv/medRxiv API
 * (api.biorxiv.org) for DOI lookups, Europe PMC's preprint index for keyword search, and the servers'
 * websites for full texts.
 */
import { EUROPE_PMC_REST_BASE_URL } from "../europe-pmc/europe-pmc-ids.js";
import type { SourceModule } from "../source-module.js";
import { createPreprintDownloadTool, createPreprintLookupTool } from "./preprint-lookup-tools.js";
import { createPreprintSearchTool } from "./preprint-search-tool.js";
import { BIORXIV, MEDRXIV, PREPRINT_API_BASE_URL, type PreprintServer } from "./preprint-server.js";

// The module of one preprint server. Endpoints: `api` (api.biorxiv.org, SCIENCEGATE_<ID>_BASE_URL) and
// `europe-pmc` (SCIENCEGATE_<ID>_EUROPE_PMC_BASE_URL).
function createPreprintSource(server: PreprintServer): SourceModule {
  return {
    id: server.id,
    attribution: `${server.name}, Cold Spring Harbor Laboratory (api.biorxiv.org); keyword search via Europe PMC (EMBL-EBI)`,
    license: `${server.name} metadata; each preprint carries the licence its authors chose (see its licence field)`,
    endpoints: [
      { key: "api", defaultBaseUrl: PREPRINT_API_BASE_URL },
      { key: "europe-pmc", defaultBaseUrl: EUROPE_PMC_REST_BASE_URL },
    ],
    tools: [
      createPreprintSearchTool(server),
      createPreprintLookupTool(server),
      createPreprintDownloadTool(server),
    ],
  };
}

/** The `biorxiv` source module (manifest: manifests/biorxiv.json). */
export const biorxivSource: SourceModule = createPreprintSource(BIORXIV);

/** The `medrxiv` source module (manifest: manifests/medrxiv.json). */
export const medrxivSource: SourceModule = createPreprintSource(MEDRXIV);
