/**
 * The downloads and extractions of a session in its crate: each downloaded file (named by its SHA-256,
 * with its URL and licence; copied only when the licence allows and one is stated) as a result of its
 * `artifact_download` call, and each extraction's text (page count, pages that need vision) and manifest
 * as results of its `paper_extract_pdf` call, which takes the PDF as its object. The text of a paper
 * the crate may not hold is not held either.
 */
import type { SourceManifest } from "../governance/manifests/index.js";
import type { ContentDescription, CrateBuilder } from "./crate-builder.js";
import { entityIds } from "./crate-vocabulary.js";
import { type Redistribution, redistribution } from "./redistribution.js";
import type { ReadObject, SessionContents } from "./session-contents.js";

/**
 * Adds the session's downloaded files and extractions to its crate.
 * @param builder the crate under construction (the calls' actions already in it)
 * @param contents what the session left behind
 * @param manifestOf a source's manifest, when the catalog has it
 */
export function addArtifacts(
  builder: CrateBuilder,
  contents: Pick<SessionContents, "downloads" | "extractions">,
  manifestOf: (sourceId: string) => SourceManifest | undefined,
): void {
  const pdfs = new Map<string, { id: string; verdict: Redistribution; licence: string | undefined }>();
  for (const download of contents.downloads) {
    const verdict = redistribution({
      sourceId: download.sourceId,
      dataClassification: manifestOf(download.sourceId)?.governance.dataClassification,
      licences: [download.licence],
      requireLicence: true,
    });
    const extension = /^[a-z0-9]{1,8}$/i.test(download.format) ? `.${download.format.toLowerCase()}` : ".bin";
    const id = builder.content(
      { ...download.file, redistribution: verdict },
      {
        path: entityIds.download(download.file.sha256, extension),
        name: download.fileName,
        encodingFormat: MEDIA_TYPES[download.format.toLowerCase()] ?? "application/octet-stream",
        licence: download.licence,
        contentUrl: download.url,
        description: `Downloaded by artifact_download from ${download.sourceId} (record ${download.sourceRecordId}).`,
      },
    );
    builder.graph.link(entityIds.invocation(download.invocationId), "result", id);
    pdfs.set(download.file.sha256, { id, verdict, licence: download.licence });
  }
  for (const extraction of contents.extractions) {
    const pdf = pdfs.get(extraction.pdfSha256);
    const verdict = pdf?.verdict ?? {
      allowed: false,
      reason: "the PDF it was extracted from is not in this session",
    };
    const action = entityIds.invocation(extraction.invocationId);
    if (pdf) builder.graph.link(action, "object", pdf.id);
    const parts: [ReadObject, ContentDescription][] = [
      [
        extraction.text,
        {
          path: entityIds.paperText(extraction.pdfSha256),
          name: "Extracted text (one section per page)",
          encodingFormat: "text/markdown",
          licence: pdf?.licence,
          extra: { numberOfPages: extraction.pageCount, needsVisionPages: extraction.needsVisionPages },
        },
      ],
      [
        extraction.manifest,
        {
          path: entityIds.paperManifest(extraction.pdfSha256),
          name: "Extraction manifest (parser, limits, pages that need vision)",
          encodingFormat: "application/json",
        },
      ],
    ];
    for (const [object, description] of parts) {
      if (object.sha256 === "") continue; // unreadable at export: the action's ledger entry still names it
      builder.graph.link(
        action,
        "result",
        builder.content({ ...object, redistribution: verdict }, description),
      );
    }
  }
}

const MEDIA_TYPES: Readonly<Record<string, string>> = {
  pdf: "application/pdf",
  xml: "application/xml",
  json: "application/json",
  txt: "text/plain",
  cif: "chemical/x-cif",
  pdb: "chemical/x-pdb",
  fasta: "text/x-fasta",
  gz: "application/gzip",
};
