/**
 * Where a ClinVar variant is and how it is written: genomic locations on each assembly (1-based, as ClinVar
 * shows them), the 0-based canonical SPDI, HGVS expressions, molecular consequences, cytogenetic band, genes and
 * rsIDs. Read from a VCV `SimpleAllele` or an RCV `Measure`, which write the same facts differently.
 */
import { asArray, asNode, child, type XmlNode, xmlAttr } from "../xml-document.js";
import { cleanText, distinct } from "./clinvar-xml.js";

/** A variant's location on one assembly, in ClinVar's 1-based, inclusive coordinates. */
export interface ClinvarLocation {
  /** `GRCh38`, `GRCh37`. */
  assembly: string;
  chromosome?: string;
  /** `NC_000009.12`. */
  sequenceAccession?: string;
  start1based?: number;
  stop1based?: number;
  /** The VCF representation (1-based position, as in a VCF file). */
  vcf?: { position1based: number; ref: string; alt: string };
}

/** HGVS expressions of a variant. */
export interface ClinvarHgvs {
  /** The coding expression on the MANE Select transcript. */
  maneSelect?: string;
  /** The protein change on the MANE Select transcript's protein (VCV documents pair them). */
  maneSelectProtein?: string;
  /** Top-level genomic expressions by assembly. */
  genomic: Record<string, string>;
  coding: string[];
  protein: string[];
}

/** One simple variant of a haplotype or genotype, with its own place. */
export interface ClinvarComponent {
  variationId?: string;
  name?: string;
  /** Inside a genotype, the haplotype this variant belongs to (`CYP2C19*12`). */
  haplotype?: string;
  genes: string[];
  canonicalSpdi0based?: string;
  locations: ClinvarLocation[];
  hgvs: ClinvarHgvs;
  proteinChanges: string[];
}

/** What a record says about the variant itself (`structuredData` fields). */
export interface ClinvarVariantFacts {
  genes: string[];
  geneIds: string[];
  rsIds: string[];
  cytogeneticBands: string[];
  /** SPDI is 0-based (interbase): the position before the reference allele. */
  canonicalSpdi0based?: string;
  locations: ClinvarLocation[];
  hgvs: ClinvarHgvs;
  /** One-letter protein changes (`T315I`). */
  proteinChanges: string[];
  molecularConsequences: { consequence: string; soId?: string; hgvs?: string }[];
  /**
   * The simple variants of a haplotype, compound heterozygote or diplotype. Its genes, bands and rsIDs are
   * theirs, and its `locations` the span they cover on each assembly.
   */
  components?: ClinvarComponent[];
}

/**
 * The variant facts of a VCV `SimpleAllele`, or of a `Haplotype`/`Genotype`, whose place is that of the simple
 * variants it is made of (ClinVar states genes and locations only on them).
 * @param allele the allele element
 * @returns the facts found
 */
export function vcvVariantFacts(allele: XmlNode): ClinvarVariantFacts {
  const own = simpleFacts(allele);
  const parts = componentsOf(allele);
  if (parts.length === 0) return own;
  const facts = parts.map((part) => simpleFacts(part.node));
  return {
    ...own,
    genes: distinct([...own.genes, ...facts.flatMap((f) => f.genes)]),
    geneIds: distinct([...own.geneIds, ...facts.flatMap((f) => f.geneIds)]),
    rsIds: distinct([...own.rsIds, ...facts.flatMap((f) => f.rsIds)]),
    cytogeneticBands: distinct([...own.cytogeneticBands, ...facts.flatMap((f) => f.cytogeneticBands)]),
    locations: spans(facts.flatMap((f) => f.locations)),
    proteinChanges: distinct(facts.flatMap((f) => f.proteinChanges)),
    molecularConsequences: facts.flatMap((f) => f.molecularConsequences),
    components: parts.map((part, index) => {
      const f = facts[index] as ClinvarVariantFacts;
      const hgvs: ClinvarHgvs = { genomic: f.hgvs.genomic, coding: [], protein: [] };
      if (f.hgvs.maneSelect) hgvs.maneSelect = f.hgvs.maneSelect;
      if (f.hgvs.maneSelectProtein) hgvs.maneSelectProtein = f.hgvs.maneSelectProtein;
      const component: ClinvarComponent = {
        genes: f.genes,
        locations: f.locations,
        hgvs,
        proteinChanges: f.proteinChanges,
      };
      const variationId = xmlAttr(part.node, "VariationID");
      const name = cleanText(asArray(part.node.Name)[0]);
      if (variationId) component.variationId = variationId;
      if (name) component.name = name;
      if (part.haplotype) component.haplotype = part.haplotype;
      if (f.canonicalSpdi0based) component.canonicalSpdi0based = f.canonicalSpdi0based;
      return component;
    }),
  };
}

/** The simple variants of a haplotype or genotype (a genotype's may sit inside its haplotypes). */
function componentsOf(allele: XmlNode): { node: XmlNode; haplotype?: string }[] {
  const direct = asArray(allele.SimpleAllele).map((node) => ({ node: asNode(node) }));
  const nested = asArray(allele.Haplotype).flatMap((haplotype) => {
    const name = cleanText(asArray(asNode(haplotype).Name)[0]);
    return asArray(asNode(haplotype).SimpleAllele).map((node) =>
      name ? { node: asNode(node), haplotype: name } : { node: asNode(node) },
    );
  });
  return [...direct, ...nested];
}

/** The stretch several variants cover on each assembly (when they lie on one chromosome there). */
function spans(locations: ClinvarLocation[]): ClinvarLocation[] {
  const byAssembly = new Map<string, ClinvarLocation[]>();
  for (const location of locations) {
    byAssembly.set(location.assembly, [...(byAssembly.get(location.assembly) ?? []), location]);
  }
  return [...byAssembly].flatMap(([assembly, list]) => {
    const accessions = distinct(list.map((l) => l.sequenceAccession));
    const chromosomes = distinct(list.map((l) => l.chromosome));
    if (accessions.length > 1 || chromosomes.length > 1) return [];
    const starts = list.flatMap((l) => l.start1based ?? []);
    const stops = list.flatMap((l) => l.stop1based ?? []);
    const span: ClinvarLocation = { assembly };
    if (chromosomes[0]) span.chromosome = chromosomes[0];
    if (accessions[0]) span.sequenceAccession = accessions[0];
    if (starts.length === list.length) span.start1based = Math.min(...starts);
    if (stops.length === list.length) span.stop1based = Math.max(...stops);
    return [span];
  });
}

function simpleFacts(allele: XmlNode): ClinvarVariantFacts {
  const genes = asArray(child(allele, "GeneList").Gene);
  const hgvs: ClinvarHgvs = { genomic: {}, coding: [], protein: [] };
  const consequences: ClinvarVariantFacts["molecularConsequences"] = [];
  for (const entry of asArray(child(allele, "HGVSlist").HGVS)) {
    const nucleotide = child(entry, "NucleotideExpression");
    const protein = child(entry, "ProteinExpression");
    const nucleotideText = cleanText(nucleotide.Expression);
    const proteinText = cleanText(protein.Expression);
    const type = xmlAttr(entry, "Type") ?? "";
    const assembly = xmlAttr(entry, "Assembly");
    if (nucleotideText && type.startsWith("genomic, top-level") && assembly)
      hgvs.genomic[assembly] = nucleotideText;
    if (nucleotideText && type === "coding") hgvs.coding.push(nucleotideText);
    if (proteinText) hgvs.protein.push(proteinText);
    if (xmlAttr(nucleotide, "MANESelect") === "true") {
      if (nucleotideText) hgvs.maneSelect = nucleotideText;
      if (proteinText) hgvs.maneSelectProtein = proteinText;
    }
    for (const consequence of asArray(asNode(entry).MolecularConsequence)) {
      const term = xmlAttr(consequence, "Type");
      if (term) consequences.push(consequenceOf(term, xmlAttr(consequence, "ID"), nucleotideText));
    }
  }
  const location = child(allele, "Location");
  return {
    genes: distinct(genes.map((gene) => xmlAttr(gene, "Symbol"))),
    geneIds: distinct(genes.map((gene) => xmlAttr(gene, "GeneID"))),
    rsIds: rsIdsOf(asArray(child(allele, "XRefList").XRef)),
    cytogeneticBands: distinct(asArray(location.CytogeneticLocation).map(cleanText)),
    ...spdi(allele),
    locations: asArray(location.SequenceLocation).flatMap(locationOf),
    hgvs,
    proteinChanges: distinct(asArray(allele.ProteinChange).map(cleanText)),
    molecularConsequences: consequences,
  };
}

/**
 * The variant facts of an RCV `MeasureSet` (its first `Measure`: RCVs of simple variants have one).
 * @param measureSet the reference assertion's `MeasureSet`
 * @returns the facts found
 */
export function rcvVariantFacts(measureSet: XmlNode): ClinvarVariantFacts {
  const measure = asNode(asArray(measureSet.Measure)[0]);
  const attributes = asArray(measure.AttributeSet).map(asNode);
  const hgvs: ClinvarHgvs = { genomic: {}, coding: [], protein: [] };
  const consequences: ClinvarVariantFacts["molecularConsequences"] = [];
  const proteinChanges: (string | undefined)[] = [];
  for (const set of attributes) {
    for (const attribute of asArray(set.Attribute)) {
      const type = xmlAttr(attribute, "Type") ?? "";
      const value = cleanText(attribute)?.trim();
      if (!value) continue;
      if (type === "HGVS, coding, RefSeq") {
        hgvs.coding.push(value);
        if (xmlAttr(attribute, "MANESelect") === "true") hgvs.maneSelect = value;
      } else if (type === "HGVS, protein, RefSeq") {
        hgvs.protein.push(value);
      } else if (type.startsWith("HGVS, genomic, top level")) {
        const build = xmlAttr(attribute, "integerValue");
        if (build === "38" || build === "37") hgvs.genomic[`GRCh${build}`] = value;
      } else if (type === "MolecularConsequence") {
        const xrefs = asArray(set.XRef);
        const so = xrefs.find((x) => xmlAttr(x, "DB") === "Sequence Ontology");
        const refseq = xrefs.find((x) => xmlAttr(x, "DB") === "RefSeq");
        consequences.push(consequenceOf(value, xmlAttr(so, "ID"), xmlAttr(refseq, "ID")));
      } else if (type === "ProteinChange1LetterCode") {
        proteinChanges.push(value);
      }
    }
  }
  const relations = asArray(measure.MeasureRelationship);
  const genes = relations.flatMap((relation) =>
    asArray(asNode(relation).Symbol).flatMap((symbol) =>
      asArray(asNode(symbol).ElementValue)
        .filter((value) => xmlAttr(value, "Type") === "Preferred")
        .map(cleanText),
    ),
  );
  const geneIds = relations.flatMap((relation) =>
    asArray(asNode(relation).XRef)
      .filter((xref) => xmlAttr(xref, "DB") === "Gene")
      .map((xref) => xmlAttr(xref, "ID")),
  );
  return {
    genes: distinct(genes),
    geneIds: distinct(geneIds),
    rsIds: rsIdsOf(asArray(measure.XRef)),
    cytogeneticBands: distinct(asArray(measure.CytogeneticLocation).map(cleanText)),
    ...spdi(measure),
    locations: asArray(measure.SequenceLocation).flatMap(locationOf),
    hgvs,
    proteinChanges: distinct(proteinChanges),
    molecularConsequences: consequences,
  };
}

function spdi(node: XmlNode): { canonicalSpdi0based?: string } {
  const value = cleanText(node.CanonicalSPDI);
  return value ? { canonicalSpdi0based: value } : {};
}

function locationOf(node: unknown): ClinvarLocation[] {
  const assembly = xmlAttr(node, "Assembly");
  if (!assembly) return [];
  const location: ClinvarLocation = { assembly };
  const chromosome = xmlAttr(node, "Chr");
  const accession = xmlAttr(node, "Accession");
  if (chromosome) location.chromosome = chromosome;
  if (accession) location.sequenceAccession = accession;
  const start = position(xmlAttr(node, "display_start") ?? xmlAttr(node, "start"));
  const stop = position(xmlAttr(node, "display_stop") ?? xmlAttr(node, "stop"));
  if (start !== undefined) location.start1based = start;
  if (stop !== undefined) location.stop1based = stop;
  const vcfPosition = position(xmlAttr(node, "positionVCF"));
  const ref = xmlAttr(node, "referenceAlleleVCF");
  const alt = xmlAttr(node, "alternateAlleleVCF");
  if (vcfPosition !== undefined && ref && alt) location.vcf = { position1based: vcfPosition, ref, alt };
  return [location];
}

function position(text: string | undefined): number | undefined {
  const value = Number(text);
  return text && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

function rsIdsOf(xrefs: unknown[]): string[] {
  return distinct(
    xrefs.map((xref) => {
      const id = xmlAttr(xref, "ID");
      return xmlAttr(xref, "DB") === "dbSNP" && id && /^\d+$/.test(id) ? `rs${id}` : undefined;
    }),
  );
}

function consequenceOf(
  consequence: string,
  soId: string | undefined,
  hgvs: string | undefined,
): ClinvarVariantFacts["molecularConsequences"][number] {
  return { consequence, ...(soId ? { soId } : {}), ...(hgvs ? { hgvs } : {}) };
}
