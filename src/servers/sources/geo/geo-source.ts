/** The `geo` source: the Gene Expression Omnibus through NCBI E-utilities, files from the GEO FTP site over HTTPS. */
import { EUTILS_ENDPOINT } from "../ncbi/eutils.js";
import type { SourceModule } from "../source-module.js";
import { geoListFilesTool, geoPrepareDatasetDownloadTool } from "./geo-file-tools.js";
import { geoLookupAccessionTool, geoSearchStudiesTool } from "./geo-search-tools.js";

/** The `geo` source module (manifest: manifests/geo.json). */
export const geoSource: SourceModule = {
  id: "geo",
  attribution:
    "Gene Expression Omnibus (GEO), National Center for Biotechnology Information, U.S. National Library of Medicine",
  license:
    "NCBI data usage policy; NCBI places no restrictions on GEO data, submitters may hold rights to it",
  endpoints: [EUTILS_ENDPOINT, { key: "ftp", defaultBaseUrl: "https://ftp.ncbi.nlm.nih.gov/geo" }],
  tools: [geoSearchStudiesTool, geoLookupAccessionTool, geoListFilesTool, geoPrepareDatasetDownloadTool],
};
