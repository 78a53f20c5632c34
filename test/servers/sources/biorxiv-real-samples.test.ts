/**
 * The bioRxiv API parser over the real answers in ../shared/fixtures/providers/biorxiv (see its README.txt:
 * the interval samples were truncated by their author). Skipped, visibly, when that folder is absent.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { parsePreprintDetails } from "../../../src/servers/sources/biorxiv/preprint-details-parser.js";
import { normalizePreprintDoi } from "../../../src/servers/sources/biorxiv/preprint-dois.js";
import { preprintVersionRecord } from "../../../src/servers/sources/biorxiv/preprint-record.js";
import { BIORXIV } from "../../../src/servers/sources/biorxiv/preprint-server.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { readManifest, resultUrls, SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "biorxiv");
const hasSamples = existsSync(SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SAMPLES} not found)`;

function sample(file: string): ProviderAnswer {
  return { text: readFileSync(path.join(SAMPLES, file), "utf8"), host: "sample", status: 200 };
}

describe.skipIf(!hasSamples)(`real bioRxiv samples${suffix}`, () => {
  test("details interval: a 10.64898 preprint with string total, NA fields, licence code and JATS link", () => {
    const details = parsePreprintDetails(sample("details_interval_TRUNCATED_FROM_DOC.json"));
    expect(details).toMatchObject({ found: true, total: 109 });
    expect(details.versions).toHaveLength(1);
    const [version] = details.versions;
    expect(version).toMatchObject({
      doi: "10.64898/2026.07.31.741992",
      version: 1,
      title: "Sound-shape correspondences in macaques reveal evolutionary roots of sound symbolism",
      authors: ["Loconsole M", "Xue C", "Garcia-Pelegrin E"],
      date: "2026-08-01",
      type: "new results",
      license: "cc_by_nc_nd",
      category: "animal behavior and cognition",
      server: "bioRxiv",
      publishedDoi: undefined,
      jatsXml: "https://www.biorxiv.org/content/early/2026/08/01/2026.07.31.741992.source.xml",
      correspondingAuthor: "Maria Loconsole",
    });
    expect(normalizePreprintDoi(version!.doi)).toEqual({ doi: "10.64898/2026.07.31.741992" });
    const record = preprintVersionRecord(BIORXIV, version!, [1]);
    expect(record).toMatchObject({
      primaryCitation: {
        label:
          "[bioRxiv:10.64898/2026.07.31.741992v1](https://www.biorxiv.org/content/10.64898/2026.07.31.741992v1)",
      },
      contentScope: "abstract",
      year: 2026,
      structuredData: { license: "CC-BY-NC-ND-4.0" },
    });
    const hosts = readManifest("biorxiv").governance.networkHosts;
    for (const url of resultUrls({ records: [record] })) expect(hosts).toContain(new URL(url).hostname);
  });

  test("'no posts found' is an answer without versions, not an error", () => {
    expect(parsePreprintDetails(sample("details_no_posts_found.json"))).toEqual({
      found: false,
      versions: [],
      total: 0,
    });
  });

  test("a pubs answer has no details records; its preprint DOI is a valid bioRxiv DOI", () => {
    const pubs = parsePreprintDetails(sample("pubs_interval_TRUNCATED_FROM_DOC.json"));
    expect(pubs).toMatchObject({ found: false, versions: [], total: 469 });
    const collection = JSON.parse(sample("pubs_interval_TRUNCATED_FROM_DOC.json").text).collection;
    expect(normalizePreprintDoi(collection[0].preprint_doi)).toEqual({ doi: "10.1101/2025.09.17.676679" });
    expect(normalizePreprintDoi(collection[0].published_doi)).toBeUndefined();
  });
});
