/**
 * The module registry of the bundled sources server. Adding a source is one import and one line here
 * (plus its manifest in manifests/<id>.json); see ./README.md.
 */
import { arxivSource } from "./arxiv/arxiv-source.js";
import { pubmedSource } from "./pubmed/pubmed-source.js";
import type { SourceModule } from "./source-module.js";

/** Every source the `sciencegate-sources` server can serve, in registration order. */
export const SOURCE_MODULES: readonly SourceModule[] = [pubmedSource, arxivSource];
