/** Turns ChEMBL `target` resources into structured records, with their UniProt components. */
import type { CrossReference, McpRecord } from "../../../contract/index.js";
import { buildRecord } from "../record-builder.js";
import { chemblTargetUrl, normalizeChemblId } from "./chembl-ids.js";
import { type ChemblItem, definedEntries, numberField, objectList, textField } from "./chembl-page.js";

// UniProt's documented accession format; ChEMBL also lists non-protein components (nucleic acids).
const UNIPROT_ACCESSION = /^(?:[OPQ][0-9][A-Z0-9]{3}[0-9]|[A-NR-Z][0-9](?:[A-Z][A-Z0-9]{2}[0-9]){1,2})$/;

/**
 * A structured record of one ChEMBL target: name, type, organism, components with their UniProt
 * accessions and gene symbols, and, for search answers, ChEMBL's relevance `score`.
 * @param item one element of a `targets` list
 * @returns the record, or undefined when the item has no valid `target_chembl_id`
 */
export function chemblTargetRecord(item: ChemblItem): McpRecord | undefined {
  const id = normalizeChemblId(textField(item.target_chembl_id) ?? "");
  if (!id) return undefined;
  const components = objectList(item.target_components);
  const crossReferences: CrossReference[] = [];
  for (const component of components) {
    const accession = textField(component.accession);
    if (!accession || crossReferences.some((x) => x.identifier === accession)) continue;
    crossReferences.push(
      UNIPROT_ACCESSION.test(accession)
        ? {
            identifier: accession,
            identifierType: "uniprot",
            url: `https://www.uniprot.org/uniprotkb/${accession}/entry`,
          }
        : { identifier: accession, identifierType: "accession" },
    );
  }
  return buildRecord({
    source: "chembl",
    identifier: id,
    identifierType: "chembl.target",
    label: id,
    url: chemblTargetUrl(id),
    title: textField(item.pref_name),
    crossReferences,
    contentScope: "structured-record",
    structuredData: definedEntries({
      targetType: textField(item.target_type),
      organism: textField(item.organism),
      taxId: numberField(item.tax_id),
      speciesGroup: typeof item.species_group_flag === "boolean" ? item.species_group_flag : undefined,
      components: components.map(componentData),
      searchScore: numberField(item.score),
    }),
  });
}

function componentData(component: ChemblItem): Record<string, unknown> {
  const geneSymbols = objectList(component.target_component_synonyms)
    .filter((synonym) => synonym.syn_type === "GENE_SYMBOL")
    .flatMap((synonym) => textField(synonym.component_synonym) ?? []);
  return definedEntries({
    accession: textField(component.accession),
    description: textField(component.component_description),
    type: textField(component.component_type),
    relationship: textField(component.relationship),
    geneSymbols: [...new Set(geneSymbols)],
  });
}
