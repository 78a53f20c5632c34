/** The `clinvar` source: ClinVar variant records through NCBI E-utilities (ESearch, ESummary, EFetch). */
import { EUTILS_ENDPOINT } from "../ncbi/eutils.js";
import type { SourceModule } from "../source-module.js";
import { clinvarGetAssertionsTool } from "./clinvar-assertions-tool.js";
import { clinvarLookupAccessionTool, clinvarSearchVariantsTool } from "./clinvar-search-tools.js";

/** The `clinvar` source module (manifest: manifests/clinvar.json). */
export const clinvarSource: SourceModule = {
  id: "clinvar",
  attribution:
    "ClinVar, National Center for Biotechnology Information, U.S. National Library of Medicine (NCBI E-utilities)",
  license:
    "NCBI data usage policy; ClinVar data are public and free to use without restriction (cite ClinVar)",
  endpoints: [EUTILS_ENDPOINT],
  tools: [clinvarSearchVariantsTool, clinvarLookupAccessionTool, clinvarGetAssertionsTool],
};
