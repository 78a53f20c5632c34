/**
 * The module registry of the bundled sources server. Adding a source is one import and one line here
 * (plus its manifest in manifests/<id>.json); see ./README.md.
 */
import { arxivSource } from "./arxiv/arxiv-source.js";
import { biorxivSource, medrxivSource } from "./biorxiv/biorxiv-source.js";
import { chemblSource } from "./chembl/chembl-source.js";
import { clinvarSource } from "./clinvar/clinvar-source.js";
import { ensemblSource } from "./ensembl/ensembl-source.js";
import { europePmcSource } from "./europe-pmc/europe-pmc-source.js";
import { geoSource } from "./geo/geo-source.js";
import { pdbSource } from "./pdb/pdb-source.js";
import { pubmedSource } from "./pubmed/pubmed-source.js";
import { reactomeSource } from "./reactome/reactome-source.js";
import type { SourceModule } from "./source-module.js";
import { uniprotSource } from "./uniprot/uniprot-source.js";

/** Every source the `sciencegate-sources` server can serve, in registration order. */
export const SOURCE_MODULES: readonly SourceModule[] = [
  pubmedSource,
  arxivSource,
  europePmcSource,
  biorxivSource,
  medrxivSource,
  chemblSource,
  uniprotSource,
  pdbSource,
  ensemblSource,
  reactomeSource,
  clinvarSource,
  geoSource,
];
