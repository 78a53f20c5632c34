/**
 * The medRxiv side of the bioRxiv/medRxiv API parser over real answers. ../shared/fixtures/providers/medrxiv
 * holds no real medRxiv answer (see its README.txt), so the per-file check is skipped visibly until one is
 * added; medRxiv answers use the bioRxiv API's envelope, so the bioRxiv sample, relabelled as its README
 * suggests, checks the medRxiv record.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { parsePreprintDetails } from "../../../src/servers/sources/biorxiv/preprint-details-parser.js";
import { preprintVersionRecord } from "../../../src/servers/sources/biorxiv/preprint-record.js";
import { MEDRXIV } from "../../../src/servers/sources/biorxiv/preprint-server.js";
import { readManifest, resultUrls, SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "medrxiv");
const jsonSamples = existsSync(SAMPLES) ? readdirSync(SAMPLES).filter((f) => f.endsWith(".json")) : [];
const BIORXIV_SAMPLE = path.join(
  SHARED_PROVIDER_SAMPLES,
  "biorxiv",
  "details_interval_TRUNCATED_FROM_DOC.json",
);
const hosts = () => readManifest("medrxiv").governance.networkHosts;

describe.skipIf(jsonSamples.length === 0)(
  `real medRxiv samples${jsonSamples.length === 0 ? ` (SKIPPED: no .json answer in ${SAMPLES})` : ""}`,
  () => {
    // One placeholder when there is none, so that the skipped suite still lists a skipped test.
    test.each(jsonSamples.length > 0 ? jsonSamples : ["(none)"])(
      "%s parses into medRxiv records on manifest hosts",
      (file) => {
        const text = readFileSync(path.join(SAMPLES, file), "utf8");
        const details = parsePreprintDetails({ text, host: "sample", status: 200 });
        for (const version of details.versions) {
          const record = preprintVersionRecord(MEDRXIV, version, [version.version]);
          for (const url of resultUrls({ records: [record] }))
            expect(hosts()).toContain(new URL(url).hostname);
        }
      },
    );
  },
);

describe.skipIf(!existsSync(BIORXIV_SAMPLE))(
  `the shared API envelope relabelled as medRxiv${existsSync(BIORXIV_SAMPLE) ? "" : " (SKIPPED: no bioRxiv sample)"}`,
  () => {
    test("a medRxiv-labelled details answer gives a record cited on www.medrxiv.org", () => {
      const text = readFileSync(BIORXIV_SAMPLE, "utf8")
        .replace('"server":"bioRxiv"', '"server":"medRxiv"')
        .replace('"type":"new results"', '"type":"PUBLISHAHEADOFPRINT"')
        .replaceAll("www.biorxiv.org", "www.medrxiv.org");
      const [version] = parsePreprintDetails({ text, host: "sample", status: 200 }).versions;
      expect(version).toMatchObject({ server: "medRxiv", type: "PUBLISHAHEADOFPRINT" });
      const record = preprintVersionRecord(MEDRXIV, version!, [1]);
      expect(record).toMatchObject({
        source: "medrxiv",
        url: "https://www.medrxiv.org/content/10.64898/2026.07.31.741992",
        structuredData: { server: "medRxiv" },
      });
      for (const url of resultUrls({ records: [record] })) expect(hosts()).toContain(new URL(url).hostname);
    });
  },
);
