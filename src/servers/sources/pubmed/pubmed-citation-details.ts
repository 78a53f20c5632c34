/**
 * What a PubMed citation says beyond title, abstract and journal: its authors in the common display form,
 * the electronic publication date, trial registry numbers and other data-bank accessions, linked comments and
 * corrections, and MeSH headings with their major topics.
 */
import { type Author, authorOf } from "../author-names.js";
import { asArray, asNode, child, type XmlNode, xmlAttr, xmlText } from "../xml-document.js";
import { pubmedUrl } from "./pubmed-ids.js";

/** One `CommentsCorrections` entry: a linked comment, erratum, retraction, update or reprint. */
export interface PubmedCommentCorrection {
  /** NLM's RefType as written: `CommentIn`, `CommentOn`, `ErratumIn`, `RetractionIn`, `UpdateOf`, ... */
  type: string;
  pmid?: string;
  /** NLM's citation of the linked item (`N Engl J Med. 2012 Jul 12;367(2):171-2.`). */
  citation?: string;
  url?: string;
}

/** A trial registration (`DataBankList` entry of a trial registry). */
export interface TrialRegistration {
  /** The registry as NLM names it: `ClinicalTrials.gov`, `ISRCTN`, `EudraCT`, `ANZCTR`, ... */
  registry: string;
  id: string;
  /** The registry's page of the trial, where the registry has a canonical one. */
  url?: string;
}

/** A MeSH heading with its qualifiers; `majorTopic` marks what the article is mainly about. */
export interface MeshHeading {
  descriptor: string;
  descriptorUi?: string;
  majorTopic: boolean;
  qualifiers: { name: string; ui?: string; majorTopic: boolean }[];
}

/** `DataBankName`s of clinical-trial registries (NLM's list); the others are sequence and data repositories. */
const TRIAL_REGISTRIES = new Set(
  [
    "ANZCTR",
    "ChiCTR",
    "ClinicalTrials.gov",
    "CRiS",
    "CTRI",
    "DRKS",
    "EudraCT",
    "IRCT",
    "ISRCTN",
    "JapicCTI",
    "JMACCT CTR",
    "JPRN",
    "NTR",
    "PACTR",
    "ReBec",
    "REPEC",
    "RPCEC",
    "SLCTR",
    "TCTR",
    "UMIN CTR",
  ].map((name) => name.toLowerCase()),
);

/** Registries whose trial page has a canonical URL, with the accession form that URL takes. */
const TRIAL_PAGES: Record<string, { pattern: RegExp; url: (id: string) => string }> = {
  "clinicaltrials.gov": { pattern: /^NCT\d{8}$/, url: (id) => `https://clinicaltrials.gov/study/${id}` },
  isrctn: { pattern: /^ISRCTN\d{8}$/, url: (id) => `https://www.isrctn.com/${id}` },
  eudract: {
    pattern: /^\d{4}-\d{6}-\d{2}$/,
    url: (id) => `https://www.clinicaltrialsregister.eu/ctr-search/search?query=${id}`,
  },
};

/**
 * The authors of an `AuthorList`, in the common display form (`Flaherty KT`; collective names as written).
 * @param list the `AuthorList` element
 * @returns the authors in list order
 */
export function pubmedAuthors(list: unknown): Author[] {
  return asArray(asNode(list).Author).flatMap((entry) => {
    const node = asNode(entry);
    const orcid = asArray(node.Identifier).find((id) => xmlAttr(id, "Source") === "ORCID");
    const author = authorOf({
      collective: xmlText(node.CollectiveName),
      family: xmlText(node.LastName),
      given: xmlText(node.ForeName),
      initials: xmlText(node.Initials),
      suffix: xmlText(node.Suffix),
      orcid: xmlText(orcid),
    });
    return author ? [author] : [];
  });
}

/**
 * The date the article was first published online: `ArticleDate DateType="Electronic"`, else the `epublish`
 * or `aheadofprint` date of the PubMed history.
 * @param article the `Article` element
 * @param pubmedData the `PubmedData` element
 * @returns `YYYY-MM-DD` (or `YYYY-MM`, `YYYY`), or undefined when PubMed gives none
 */
export function electronicPublicationDate(article: XmlNode, pubmedData: XmlNode): string | undefined {
  const articleDate = asArray(article.ArticleDate).find(
    (date) => (xmlAttr(date, "DateType") ?? "Electronic") === "Electronic",
  );
  if (articleDate) return isoDate(asNode(articleDate));
  const history = asArray(child(pubmedData, "History").PubMedPubDate);
  for (const status of ["epublish", "aheadofprint"]) {
    const date = history.find((entry) => xmlAttr(entry, "PubStatus") === status);
    if (date) return isoDate(asNode(date));
  }
  return undefined;
}

/**
 * The trial registrations and the other data-bank accessions of an `Article`'s `DataBankList`.
 * @param article the `Article` element
 * @returns trial registrations (with the registry's page where it has a canonical one) and other accessions
 */
export function pubmedDataBanks(article: XmlNode): {
  trialRegistrations: TrialRegistration[];
  dataBankAccessions: { dataBank: string; accession: string }[];
} {
  const trialRegistrations: TrialRegistration[] = [];
  const dataBankAccessions: { dataBank: string; accession: string }[] = [];
  for (const bank of asArray(child(article, "DataBankList").DataBank)) {
    const name = xmlText(asNode(bank).DataBankName);
    if (!name) continue;
    const accessions = asArray(child(asNode(bank), "AccessionNumberList").AccessionNumber).flatMap((a) => {
      const text = xmlText(a);
      return text ? [text] : [];
    });
    for (const id of accessions) {
      if (!TRIAL_REGISTRIES.has(name.toLowerCase())) {
        dataBankAccessions.push({ dataBank: name, accession: id });
        continue;
      }
      const page = TRIAL_PAGES[name.toLowerCase()];
      trialRegistrations.push({
        registry: name,
        id,
        ...(page?.pattern.test(id) ? { url: page.url(id) } : {}),
      });
    }
  }
  return { trialRegistrations, dataBankAccessions };
}

/**
 * Every `CommentsCorrections` entry of a citation but the reference list (`Cites`), in NLM's order.
 * @param citation the `MedlineCitation` element (parsed with both comment-correction tags repeating)
 * @returns the entries, each linked to PubMed when it has a PMID
 */
export function pubmedCommentsCorrections(citation: XmlNode): PubmedCommentCorrection[] {
  return asArray(citation.CommentsCorrectionsList)
    .flatMap((list) => asArray(asNode(list).CommentsCorrections))
    .flatMap((entry) => {
      const type = xmlAttr(entry, "RefType");
      if (!type || type === "Cites") return [];
      const node = asNode(entry);
      const pmid = xmlText(node.PMID);
      const citationText = xmlText(node.RefSource);
      return [
        {
          type,
          ...(pmid ? { pmid } : {}),
          ...(citationText ? { citation: citationText } : {}),
          ...(pmid ? { url: pubmedUrl(pmid) } : {}),
        },
      ];
    });
}

/**
 * The MeSH headings of a citation, and its major topics as PubMed lists them: a starred descriptor by itself,
 * a starred qualifier as `Descriptor/qualifier`.
 * @param citation the `MedlineCitation` element
 * @returns the headings and the major topics
 */
export function pubmedMesh(citation: XmlNode): { meshHeadings: MeshHeading[]; meshMajorTopics: string[] } {
  const meshHeadings: MeshHeading[] = [];
  const meshMajorTopics: string[] = [];
  for (const heading of asArray(child(citation, "MeshHeadingList").MeshHeading)) {
    const node = asNode(heading);
    const descriptorNode = node.DescriptorName;
    const descriptor = xmlText(descriptorNode);
    if (!descriptor) continue;
    const qualifiers = asArray(node.QualifierName).flatMap((qualifier) => {
      const name = xmlText(qualifier);
      if (!name) return [];
      const ui = xmlAttr(qualifier, "UI");
      return [{ name, ...(ui ? { ui } : {}), majorTopic: xmlAttr(qualifier, "MajorTopicYN") === "Y" }];
    });
    const majorTopic = xmlAttr(descriptorNode, "MajorTopicYN") === "Y";
    const descriptorUi = xmlAttr(descriptorNode, "UI");
    meshHeadings.push({ descriptor, ...(descriptorUi ? { descriptorUi } : {}), majorTopic, qualifiers });
    if (majorTopic) meshMajorTopics.push(descriptor);
    for (const qualifier of qualifiers) {
      if (qualifier.majorTopic) meshMajorTopics.push(`${descriptor}/${qualifier.name}`);
    }
  }
  return { meshHeadings, meshMajorTopics };
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

function isoDate(date: XmlNode): string | undefined {
  const year = xmlText(date.Year);
  if (!year || !/^\d{4}$/.test(year)) return undefined;
  const monthText = xmlText(date.Month)?.toLowerCase();
  const monthIndex = monthText ? MONTHS.indexOf(monthText.slice(0, 3)) : -1;
  const month = monthIndex >= 0 ? monthIndex + 1 : Number(monthText);
  if (!Number.isInteger(month) || month < 1 || month > 12) return year;
  const day = Number(xmlText(date.Day));
  const pad = (value: number) => String(value).padStart(2, "0");
  return Number.isInteger(day) && day >= 1 && day <= 31
    ? `${year}-${pad(month)}-${pad(day)}`
    : `${year}-${pad(month)}`;
}
