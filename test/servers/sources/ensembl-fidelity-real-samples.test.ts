/**
 * What an Ensembl record says about what it cites: a label that claims no version its link does not show, and
 * the gene's canonical transcript. Over the real rest.ensembl.org lookups in ../shared/fixtures/providers/ensembl
 * (skipped, visibly, when that folder is absent); one test edits the BRAF lookup the way newer releases write
 * it (see there).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { parseEnsemblLookup } from "../../../src/servers/sources/ensembl/ensembl-json.js";
import {
  ensemblGeneRecord,
  ensemblTranscriptRecord,
} from "../../../src/servers/sources/ensembl/ensembl-records.js";
import type { ProviderAnswer } from "../../../src/servers/sources/source-module.js";
import { SHARED_PROVIDER_SAMPLES } from "./sources-harness.js";

const SAMPLES = path.join(SHARED_PROVIDER_SAMPLES, "ensembl");
const hasSamples = existsSync(SAMPLES);
const suffix = hasSamples ? "" : ` (SKIPPED: ${SAMPLES} not found)`;
const text = (file: string): string => readFileSync(path.join(SAMPLES, file), "utf8");
const answer = (body: string): ProviderAnswer => ({ text: body, host: "sample", status: 200 });
const BRAF_PAGE = "https://www.ensembl.org/Homo_sapiens/Gene/Summary?g=ENSG00000157764";

describe.skipIf(!hasSamples)(`Ensembl fidelity over real samples${suffix}`, () => {
  test("the gene's label names no version its current-release link does not show; the version read is kept", () => {
    const record = ensemblGeneRecord(
      parseEnsemblLookup(answer(text("lookup_id_ENSG00000157764_expand1.json"))),
    );
    expect(record.primaryCitation).toEqual({
      label: `[Ensembl:ENSG00000157764](${BRAF_PAGE})`,
      url: BRAF_PAGE,
      identifier: "ENSG00000157764",
      identifierType: "ensembl_gene",
      version: "13",
    });
    expect(record.structuredData?.version).toBe(13);
  });

  test("a transcript's label likewise names no version", () => {
    const record = ensemblTranscriptRecord(
      parseEnsemblLookup(answer(text("lookup_id_ENST00000496384.json"))),
    );
    expect(record.primaryCitation.label).toBe(
      "[Ensembl:ENST00000496384](https://www.ensembl.org/Homo_sapiens/Transcript/Summary?t=ENST00000496384)",
    );
    expect(record.primaryCitation.version).toBe("7");
  });

  test("the canonical transcript is surfaced at gene level from the transcript Ensembl flags is_canonical", () => {
    // This capture predates the gene-level canonical_transcript field; one of its 21 transcripts is flagged.
    const record = ensemblGeneRecord(
      parseEnsemblLookup(answer(text("lookup_id_ENSG00000157764_expand1.json"))),
    );
    expect(record.structuredData?.canonicalTranscript).toBe("ENST00000646891.1");
    expect(record.crossReferences).toContainEqual({
      identifier: "ENST00000646891",
      identifierType: "ensembl_transcript",
      url: "https://www.ensembl.org/Homo_sapiens/Transcript/Summary?t=ENST00000646891",
    });
    const transcripts = record.structuredData?.transcripts as { id: string; isCanonical: boolean }[];
    expect(transcripts.filter((t) => t.isCanonical).map((t) => t.id)).toEqual(["ENST00000646891"]);
  });

  test("a gene-level canonical_transcript (newer releases) is taken as Ensembl states it", () => {
    // Edited: canonical_transcript added to the gene, as current releases write it (versioned id).
    const gene = {
      ...JSON.parse(text("lookup_id_ENSG00000157764_expand1.json")),
      canonical_transcript: "ENST00000646891.2",
    };
    const record = ensemblGeneRecord(parseEnsemblLookup(answer(JSON.stringify(gene))));
    expect(record.structuredData?.canonicalTranscript).toBe("ENST00000646891.2");
  });

  test("without a gene-level field and with no flagged transcript, no canonical transcript is invented", () => {
    // Edited: every transcript's is_canonical set to 0.
    const gene = JSON.parse(text("lookup_id_ENSG00000157764_expand1.json")) as {
      Transcript: { is_canonical: number }[];
    };
    for (const transcript of gene.Transcript) transcript.is_canonical = 0;
    const record = ensemblGeneRecord(parseEnsemblLookup(answer(JSON.stringify(gene))));
    expect(record.structuredData).not.toHaveProperty("canonicalTranscript");
    expect(record.crossReferences.map((x) => x.identifierType)).toEqual(["hgnc"]);
  });
});
