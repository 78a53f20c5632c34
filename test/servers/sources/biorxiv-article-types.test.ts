/**
 * The article type of a bioRxiv/medRxiv record: readable words in `structuredData.articleType`, the API's
 * code in `articleTypeCode`, and an unknown code passed on but labelled. Runs over the real `details`
 * sample in ../shared/fixtures/providers/biorxiv (skipped, visibly, when absent); the other types are the
 * same sample with only its `type` (and, for medRxiv, `server`) edited, as each test says.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { parsePreprintDetails } from "../../../src/servers/sources/biorxiv/preprint-details-parser.js";
import { preprintVersionRecord } from "../../../src/servers/sources/biorxiv/preprint-record.js";
import {
  BIORXIV,
  MEDRXIV,
  type PreprintServer,
} from "../../../src/servers/sources/biorxiv/preprint-server.js";
import { SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLE = path.join(SHARED_PROVIDER_SAMPLES, "biorxiv", "details_interval_TRUNCATED_FROM_DOC.json");
const hasSample = existsSync(SAMPLE);
const suffix = hasSample ? "" : ` (SKIPPED: ${SAMPLE} not found)`;

function recordWithType(server: PreprintServer, type?: string) {
  let text = readFileSync(SAMPLE, "utf8");
  if (type !== undefined) text = text.replace('"type":"new results"', `"type":${JSON.stringify(type)}`);
  if (server === MEDRXIV) text = text.replace('"server":"bioRxiv"', '"server":"medRxiv"');
  const [version] = parsePreprintDetails({ text, host: "sample", status: 200 }).versions;
  return preprintVersionRecord(server, version!, [1]);
}

describe.skipIf(!hasSample)(`bioRxiv/medRxiv article types${suffix}`, () => {
  test("the real bioRxiv sample: 'new results', with the API's code beside it", () => {
    expect(recordWithType(BIORXIV).structuredData).toMatchObject({
      articleType: "new results",
      articleTypeCode: "new results",
    });
  });

  test.each([
    ["confirmatory results", "confirmatory results (largely replicates published work and agrees with it)"],
    ["contradictory results", "contradictory results (largely replicates published work and contradicts it)"],
  ])("edited sample, type '%s': says what the type means", (code, readable) => {
    expect(recordWithType(BIORXIV, code).structuredData).toMatchObject({
      articleType: readable,
      articleTypeCode: code,
    });
  });

  test("edited sample relabelled medRxiv, type PUBLISHAHEADOFPRINT: a posted preprint, not a results type", () => {
    expect(recordWithType(MEDRXIV, "PUBLISHAHEADOFPRINT").structuredData).toMatchObject({
      server: "medRxiv",
      articleType: "posted preprint (medRxiv gives no results type)",
      articleTypeCode: "PUBLISHAHEADOFPRINT",
    });
  });

  test("edited sample with an unknown type: passed on as sent, labelled as unrecognized", () => {
    expect(recordWithType(BIORXIV, "WITHDRAWN").structuredData).toMatchObject({
      articleType: 'unrecognized article type "WITHDRAWN" (as the API sent it)',
      articleTypeCode: "WITHDRAWN",
    });
  });
});
