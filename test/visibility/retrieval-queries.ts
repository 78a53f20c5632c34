/**
 * The labelled query set of the retrieval-quality test: requests as a researcher would phrase them,
 * each with every tool that would be a right answer. Written from the tasks the twelve built-in
 * sources serve (issue 4), not from their manifest wording.
 */

/** One labelled query. */
export interface LabelledQuery {
  query: string;
  /** Acceptable answers (model-visible names); a hit in the top k counts as recalled. */
  expected: string[];
}

const pubmed = (tool: string) => `mcp__pubmed__${tool}`;
const epmc = (tool: string) => `mcp__europe-pmc__${tool}`;
const LITERATURE_SEARCH = [pubmed("search"), epmc("search")];

/** At least 40 queries over every built-in source. */
export const LABELLED_QUERIES: LabelledQuery[] = [
  // Literature: PubMed, Europe PMC
  { query: "find papers about CRISPR off-target effects", expected: LITERATURE_SEARCH },
  {
    query: "recent clinical trials of semaglutide for obesity",
    expected: [...LITERATURE_SEARCH, "mcp__medrxiv__search_preprints"],
  },
  { query: "literature on gut microbiome and depression", expected: LITERATURE_SEARCH },
  { query: "get the abstract of PMID 31452104", expected: [pubmed("fetch_abstracts")] },
  { query: "abstracts for these PMIDs: 23287718, 25079317", expected: [pubmed("fetch_abstracts")] },
  { query: "which articles cite PMID 23287718", expected: [pubmed("find_related")] },
  { query: "articles similar to this PubMed paper", expected: [pubmed("find_related")] },
  { query: "reference list of PMID 25079317", expected: [pubmed("find_related")] },
  {
    query: "download the full-text PDF of PMC7096803",
    expected: [pubmed("prepare_paper_download"), epmc("prepare_paper_download")],
  },
  { query: "Europe PMC search for open access articles on malaria vaccines", expected: [epmc("search")] },
  {
    query: "open access full text of an article by PMCID",
    expected: [epmc("prepare_paper_download"), pubmed("prepare_paper_download")],
  },
  // arXiv
  { query: "preprints on quantum error correction", expected: ["mcp__arxiv__search"] },
  { query: "search arXiv for graph neural networks", expected: ["mcp__arxiv__search"] },
  { query: "look up arXiv 1706.03762", expected: ["mcp__arxiv__lookup"] },
  { query: "get the PDF of arXiv paper 2303.08774", expected: ["mcp__arxiv__prepare_paper_download"] },
  // bioRxiv, medRxiv
  {
    query: "bioRxiv preprints about single-cell sequencing of the mouse brain",
    expected: ["mcp__biorxiv__search_preprints"],
  },
  {
    query: "fetch the bioRxiv preprint with DOI 10.1101/2020.03.22.002386",
    expected: ["mcp__biorxiv__lookup_doi"],
  },
  { query: "download a bioRxiv preprint as PDF", expected: ["mcp__biorxiv__prepare_paper_download"] },
  { query: "medRxiv preprints on long COVID", expected: ["mcp__medrxiv__search_preprints"] },
  { query: "medRxiv preprint by DOI 10.1101/2021.01.01.21249131", expected: ["mcp__medrxiv__lookup_doi"] },
  { query: "full text PDF of a medRxiv preprint", expected: ["mcp__medrxiv__prepare_paper_download"] },
  // UniProt
  { query: "protein entries for the human insulin receptor", expected: ["mcp__uniprot__search"] },
  { query: "function of UniProt accession P04637", expected: ["mcp__uniprot__lookup"] },
  { query: "FASTA sequence of P69905", expected: ["mcp__uniprot__prepare_sequence"] },
  { query: "which proteins are kinases in Arabidopsis", expected: ["mcp__uniprot__search"] },
  // PDB
  { query: "crystal structures of the SARS-CoV-2 spike protein", expected: ["mcp__pdb__search_structures"] },
  { query: "cryo-EM structure of the ribosome", expected: ["mcp__pdb__search_structures"] },
  { query: "resolution and experimental method of PDB entry 4HHB", expected: ["mcp__pdb__lookup_structure"] },
  { query: "download mmCIF coordinates for 6VXX", expected: ["mcp__pdb__prepare_structure_download"] },
  // Ensembl
  { query: "where is the BRAF gene located in the genome", expected: ["mcp__ensembl__lookup_gene"] },
  { query: "Ensembl gene ENSG00000139618", expected: ["mcp__ensembl__lookup_gene"] },
  { query: "exons of transcript ENST00000380152", expected: ["mcp__ensembl__lookup_transcript"] },
  {
    query: "genes overlapping the region 7:140700000-140900000",
    expected: ["mcp__ensembl__overlap_region"],
  },
  {
    query: "predict the consequence of the missense variant rs699",
    expected: ["mcp__ensembl__variant_consequence"],
  },
  { query: "VEP annotation of 9:g.22125504G>C", expected: ["mcp__ensembl__variant_consequence"] },
  // Reactome
  { query: "pathways involving mTOR signaling", expected: ["mcp__reactome__search_pathways"] },
  { query: "details of Reactome pathway R-HSA-109581", expected: ["mcp__reactome__lookup_pathway"] },
  { query: "pathway enrichment for my gene list TP53 MDM2 CDKN1A", expected: ["mcp__reactome__enrichment"] },
  { query: "over-representation analysis of a set of genes", expected: ["mcp__reactome__enrichment"] },
  // ClinVar
  {
    query: "is BRCA1 c.68_69delAG pathogenic",
    expected: ["mcp__clinvar__search_variants", "mcp__clinvar__get_assertions"],
  },
  { query: "ClinVar record VCV000017661", expected: ["mcp__clinvar__lookup_accession"] },
  {
    query: "classification and review status stars of the submissions for a variant",
    expected: ["mcp__clinvar__get_assertions"],
  },
  { query: "variants of uncertain significance in CFTR", expected: ["mcp__clinvar__search_variants"] },
  // ChEMBL
  { query: "find compounds named imatinib", expected: ["mcp__chembl__search_molecules"] },
  {
    query: "molecules similar to aspirin, SMILES CC(=O)Oc1ccccc1C(=O)O",
    expected: ["mcp__chembl__similarity_search"],
  },
  { query: "IC50 values of inhibitors against EGFR", expected: ["mcp__chembl__search_activities"] },
  { query: "druggable targets for Alzheimer's disease", expected: ["mcp__chembl__search_targets"] },
  { query: "bioactivity data for CHEMBL25", expected: ["mcp__chembl__search_activities"] },
  { query: "structural analogues by Tanimoto similarity", expected: ["mcp__chembl__similarity_search"] },
  { query: "mechanism of action of imatinib", expected: ["mcp__chembl__get_mechanisms"] },
  // GEO
  { query: "gene expression datasets of breast cancer RNA-seq", expected: ["mcp__geo__search_studies"] },
  { query: "metadata of GEO series GSE12345", expected: ["mcp__geo__lookup_accession"] },
  { query: "list the supplementary files of GSE12345", expected: ["mcp__geo__list_files"] },
  { query: "download the GEO dataset GSE12345", expected: ["mcp__geo__prepare_dataset_download"] },
  { query: "microarray studies of mouse liver", expected: ["mcp__geo__search_studies"] },
  // LLM Wiki (evaluated once manifests/llm-wiki.json exists)
  {
    query: "search our knowledge base wiki for notes on the assay protocol",
    expected: ["mcp__llm-wiki__search"],
  },
  { query: "read the wiki page methods/western-blot.md", expected: ["mcp__llm-wiki__get_page"] },
  { query: "read several wiki pages at once within a token budget", expected: ["mcp__llm-wiki__get_pages"] },
  // Bare names and ids (the model often echoes a name from <available-deferred-tools>)
  { query: "fetch_abstracts", expected: [pubmed("fetch_abstracts")] },
  { query: "lookup_gene", expected: ["mcp__ensembl__lookup_gene"] },
  { query: "similarity_search", expected: ["mcp__chembl__similarity_search"] },
  { query: "pubmed search", expected: [pubmed("search")] },
  { query: "clinvar.get_assertions", expected: ["mcp__clinvar__get_assertions"] },
  // A second batch, written after the ranking was tuned on the first, as a check against overfitting.
  {
    query: "systematic reviews on vitamin D and fracture risk",
    expected: ["mcp__pubmed__search", "mcp__europe-pmc__search"],
  },
  {
    query: "COVID-19 vaccine effectiveness preprints in medicine",
    expected: ["mcp__medrxiv__search_preprints"],
  },
  { query: "papers that are cited by this article PMID 30000000", expected: ["mcp__pubmed__find_related"] },
  { query: "transformer language models arxiv", expected: ["mcp__arxiv__search"] },
  { query: "arXiv id hep-th/9711200", expected: ["mcp__arxiv__lookup"] },
  { query: "evolution biology preprint on bioRxiv", expected: ["mcp__biorxiv__search_preprints"] },
  { query: "amino acid sequence download for a UniProt entry", expected: ["mcp__uniprot__prepare_sequence"] },
  { query: "reviewed Swiss-Prot entries for hemoglobin", expected: ["mcp__uniprot__search"] },
  { query: "3D structure of hemoglobin", expected: ["mcp__pdb__search_structures"] },
  {
    query: "transcript isoforms of TP53",
    expected: ["mcp__ensembl__lookup_transcript", "mcp__ensembl__lookup_gene"],
  },
  {
    query: "what genes are on chromosome 17 between 43 and 44 Mb",
    expected: ["mcp__ensembl__overlap_region"],
  },
  { query: "signalling pathways for insulin", expected: ["mcp__reactome__search_pathways"] },
  {
    query: "clinical significance of rs80357906",
    expected: [
      "mcp__clinvar__search_variants",
      "mcp__clinvar__get_assertions",
      "mcp__clinvar__lookup_accession",
    ],
  },
  { query: "pathogenic mutations in the LDLR gene", expected: ["mcp__clinvar__search_variants"] },
  { query: "potency of compounds on the hERG channel", expected: ["mcp__chembl__search_activities"] },
  { query: "drug molecule information for metformin", expected: ["mcp__chembl__search_molecules"] },
  { query: "single-cell RNA-seq datasets of human lung", expected: ["mcp__geo__search_studies"] },
  { query: "samples and platform of GSM1234567", expected: ["mcp__geo__lookup_accession"] },
  {
    query: "expression matrix files for a GEO series",
    expected: ["mcp__geo__list_files", "mcp__geo__prepare_dataset_download"],
  },
  {
    query: "PDF of an open-access PubMed Central article",
    expected: ["mcp__pubmed__prepare_paper_download", "mcp__europe-pmc__prepare_paper_download"],
  },
];

/**
 * The queries about sources that exist: one about a source not shipped yet waits for its manifest.
 * @param sourceIds the ids of the loaded manifests
 * @returns the queries to evaluate
 */
export function evaluableQueries(sourceIds: Iterable<string>): LabelledQuery[] {
  const sources = new Set(sourceIds);
  return LABELLED_QUERIES.filter((q) => q.expected.some((name) => sources.has(name.split("__")[1] ?? "")));
}
