/**
 * arXiv's `<arxiv:doi>` and `<arxiv:journal_ref>` name the published (journal or proceedings) version of a
 * preprint, as its authors report it: the record must say so and type the DOI as a `published-doi`, the way
 * bioRxiv's `published` field is treated, rather than as the DOI of the preprint itself. Runs over the real
 * answers in ../shared/fixtures/providers/arxiv (see its README.txt); skipped, visibly, when that folder is
 * absent.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { workIdentifierKey } from "../../../src/artifacts/identifier-match.js";
import { parseArxivFeed } from "../../../src/servers/sources/arxiv/arxiv-feed-parser.js";
import { readManifest, resultUrls, SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "arxiv");
const hasSamples = existsSync(SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SAMPLES} not found)`;

function feedOf(file: string, edit: (text: string) => string = (text) => text) {
  const text = edit(readFileSync(path.join(SAMPLES, file), "utf8"));
  return parseArxivFeed({ text, host: "sample", status: 200 });
}

describe.skipIf(!hasSamples)(`arXiv published versions on real samples${suffix}`, () => {
  test("a search page: <arxiv:doi> is the published version's DOI, with journal reference and warning", () => {
    const feed = feedOf("query_search_testing_start0_max10.atom");
    const entry = feed.entries.find((e) => e.id === "2005.14124");
    expect(entry?.version).toBe(2);
    const record = entry!.record;
    expect(record.crossReferences).toEqual([
      {
        identifier: "10.1145/3395363.3397376",
        identifierType: "published-doi",
        url: "https://doi.org/10.1145/3395363.3397376",
      },
    ]);
    expect(record.structuredData).toMatchObject({
      publishedDoi: "10.1145/3395363.3397376",
      journalRef:
        "In Proc. ACM SIGSOFT International Symposium on Software Testing and Analysis (ISSTA 2020), pages 14-26. ACM, 2020",
    });
    expect(record.warnings).toEqual([
      "The authors report a published version of arXiv:2005.14124v2: doi:10.1145/3395363.3397376 (In Proc. ACM " +
        "SIGSOFT International Symposium on Software Testing and Analysis (ISSTA 2020), pages 14-26. ACM, " +
        "2020); prefer citing the published version.",
    ]);
    // Still a preprint: the arXiv text is not the refereed one.
    expect(record.peerReviewStatus).toBe("preprint");
    // The journal DOI no longer counts as another name of the arXiv record.
    const sameWork = record.crossReferences.filter((x) => ["doi", "arxiv"].includes(x.identifierType));
    expect(sameWork.map((x) => workIdentifierKey(x.identifier))).toEqual([]);
  });

  test("every entry of the page with a DOI gets a published-doi, none keeps a plain doi", () => {
    const feed = feedOf("query_search_testing_start0_max10.atom");
    const withDoi = feed.entries.filter((e) => e.record.crossReferences.length > 0);
    expect(withDoi.map((e) => e.id)).toEqual([
      "2202.12139",
      "2405.13786",
      "2005.14124",
      "2204.08348",
      "2302.03287",
      "1205.1866",
    ]);
    for (const { record } of withDoi) {
      expect(record.crossReferences.map((x) => x.identifierType)).toEqual(["published-doi"]);
      expect(record.warnings.join(" ")).toContain("prefer citing the published version");
    }
    const hosts = readManifest("arxiv").governance.networkHosts;
    for (const url of resultUrls({ records: feed.entries.map((e) => e.record) }))
      expect(hosts).toContain(new URL(url).hostname);
  });

  test("a journal reference without a DOI still says that a published version exists", () => {
    const feed = feedOf("query_search_testing_start0_max10.atom");
    const record = feed.entries.find((e) => e.id === "1202.4527")?.record;
    expect(record?.crossReferences).toEqual([]);
    expect(record?.warnings).toEqual([
      "The authors report a published version of arXiv:1202.4527v1: International Journal of Software " +
        "Engineering & Applications (IJSEA), Vol.3, No.1, January 2012 (no DOI given); prefer citing the " +
        "published version.",
    ]);
    const [old] = feedOf("query_id_list_old_style_astro-ph_0601001.atom").entries;
    expect(old?.record.warnings).toEqual([
      "The authors report a published version of arXiv:astro-ph/0601001v1: ActaAstron.56:1-50,2006 (no DOI " +
        "given); prefer citing the published version.",
    ]);
  });

  test("a paper without DOI or journal reference gets no published-version warning", () => {
    const [entry] = feedOf("query_id_list_1605.08386.atom").entries;
    expect(entry?.record.crossReferences).toEqual([]);
    expect(entry?.record.warnings).toEqual([]);
    expect(entry?.record.structuredData).not.toHaveProperty("publishedDoi");
  });

  test("edited sample: two DOIs in one <arxiv:doi> (as arXiv allows) become two published-doi references", () => {
    // Edited: the second DOI (an erratum-style companion, invented) was appended to the real <arxiv:doi>.
    const feed = feedOf("query_search_testing_start0_max10.atom", (text) =>
      text.replace(
        "<arxiv:doi>10.1145/3395363.3397376</arxiv:doi>",
        "<arxiv:doi>10.1145/3395363.3397376 10.1145/3395363.3999999</arxiv:doi>",
      ),
    );
    const record = feed.entries.find((e) => e.id === "2005.14124")?.record;
    expect(record?.crossReferences.map((x) => [x.identifier, x.identifierType])).toEqual([
      ["10.1145/3395363.3397376", "published-doi"],
      ["10.1145/3395363.3999999", "published-doi"],
    ]);
    expect(record?.warnings[0]).toContain("doi:10.1145/3395363.3397376, doi:10.1145/3395363.3999999 (");
  });
});
