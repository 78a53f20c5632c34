/**
 * The Ensembl parsers over real rest.ensembl.org answers captured in ../shared/fixtures/providers/ensembl (see
 * README.txt there for their origin). Skipped, visibly, when that folder is not next to the repository.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { normalizeEnsemblId } from "../../../src/servers/sources/ensembl/ensembl-ids.js";
import { parseEnsemblLookup } from "../../../src/servers/sources/ensembl/ensembl-json.js";
import {
  ensemblGeneRecord,
  ensemblTranscriptRecord,
} from "../../../src/servers/sources/ensembl/ensembl-records.js";
import { isProviderError } from "../../../src/servers/sources/provider-error.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { readManifest, resultUrls, SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "ensembl");
const hasSamples = existsSync(SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SAMPLES} not found)`;

function sample(file: string): ProviderAnswer {
  return { text: readFileSync(path.join(SAMPLES, file), "utf8"), host: "sample", status: 200 };
}

function expectOnEnsemblHosts(urls: string[]): void {
  const hosts = readManifest("ensembl").governance.networkHosts;
  for (const url of urls) {
    expect(url.startsWith("https://"), url).toBe(true);
    expect(hosts, url).toContain(new URL(url).hostname);
  }
}

describe.skipIf(!hasSamples)(`real Ensembl samples${suffix}`, () => {
  test("lookup/id ENSG00000157764?expand=1: BRAF with location, HGNC id and its 21 transcripts", () => {
    const gene = parseEnsemblLookup(sample("lookup_id_ENSG00000157764_expand1.json"));
    const record = ensemblGeneRecord(gene);
    expect(record).toMatchObject({
      identifier: "ENSG00000157764",
      identifierType: "ensembl_gene",
      title: "BRAF: B-Raf proto-oncogene, serine/threonine kinase",
      url: "https://www.ensembl.org/Homo_sapiens/Gene/Summary?g=ENSG00000157764",
      contentScope: "structured-record",
      primaryCitation: { version: "13" },
      crossReferences: [
        { identifier: "HGNC:1097", identifierType: "hgnc" },
        { identifier: "ENST00000646891", identifierType: "ensembl_transcript" },
      ],
      structuredData: {
        symbol: "BRAF",
        biotype: "protein_coding",
        location: { seqRegion: "7", start: 140719327, end: 140924928, strand: -1, assembly: "GRCh38" },
        transcriptCount: 21,
      },
    });
    const transcripts = record.structuredData?.transcripts as Record<string, unknown>[];
    expect(transcripts.find((t) => t.id === "ENST00000496384")).toEqual({
      id: "ENST00000496384",
      version: 7,
      name: "BRAF-204",
      biotype: "protein_coding",
      isCanonical: false,
      start: 140719327,
      end: 140924810,
      exonCount: 19,
      translation: { id: "ENSP00000419060", length: 767, start: 140726494, end: 140924703 },
    });
    expectOnEnsemblHosts(resultUrls({ records: [record] }));
  });

  test("lookup/id ENST00000496384: a non-canonical protein-coding transcript of BRAF", () => {
    const record = ensemblTranscriptRecord(parseEnsemblLookup(sample("lookup_id_ENST00000496384.json")), 6);
    expect(record).toMatchObject({
      identifier: "ENST00000496384",
      title: "BRAF-204: protein coding transcript of ENSG00000157764",
      url: "https://www.ensembl.org/Homo_sapiens/Transcript/Summary?t=ENST00000496384",
      crossReferences: [{ identifier: "ENSG00000157764", identifierType: "ensembl_gene" }],
      structuredData: { isCanonical: false, gene: "ENSG00000157764", version: 7 },
      warnings: [
        "ENST00000496384.6 was asked for; Ensembl serves only the current release, where it is ENST00000496384.7.",
      ],
    });
    expectOnEnsemblHosts(resultUrls({ records: [record] }));
  });

  test("a sequence answer is not a lookup answer: malformed, not an empty success", () => {
    const answer = sample("sequence_id_ENSP00000419060.2.json");
    const query = (JSON.parse(answer.text) as { query: string }).query;
    expect(normalizeEnsemblId(query)).toEqual({ id: "ENSP00000419060", kind: "protein", version: 2 });
    let code: string | undefined;
    try {
      parseEnsemblLookup(answer);
    } catch (error) {
      code = isProviderError(error) ? error.code : "not a ProviderError";
    }
    expect(code).toBe("upstream_unavailable");
  });
});
