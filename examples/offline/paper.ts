/**
 * The offline stand-in for arxiv.org's PDF server, for the examples that download a paper: a PDF made
 * here (three text pages and a figure page without text), a `fetch` seam that serves it for
 * `https://arxiv.org/pdf/…` only, and a DNS seam that resolves every host to a public documentation
 * address, so the download's real checks (HTTPS, the manifest's host allowlist, the address check) run
 * without network. Pass both as `createGovernance({ downloads: { fetch, lookup } })`.
 */
import type { DownloadFetch, DownloadLookup } from "sciencegate/artifacts";

/** The text of each page; an empty page is drawn but has no text (extraction flags it as needing vision). */
export const PAPER_PAGES: readonly (readonly string[])[] = [
  [
    "Genome-wide Off-target Prediction for CRISPR Base Editors with Graph Neural Networks",
    "(offline stand-in for arXiv:2403.01234v2)",
  ],
  ["Methods. Candidate off-target sites are encoded as graphs of guide-target pairs."],
  ["Results. On held-out GUIDE-seq data the model ranks validated sites first."],
  [],
];

/**
 * A minimal PDF 1.4: one Helvetica text page per entry, with a correct cross-reference table.
 * @param pages the lines of each page
 * @returns the PDF bytes
 */
export function makePaperPdf(pages: readonly (readonly string[])[] = PAPER_PAGES): Buffer {
  const objects = [
    "",
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${pages.map((_, i) => `${4 + 2 * i} 0 R`).join(" ")}] /Count ${pages.length} >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  pages.forEach((lines, i) => {
    const text = lines.map(
      (line, l) => `${l === 0 ? "" : "0 -16 Td "}(${line.replace(/[\\()]/g, "\\$&")}) Tj`,
    );
    const content = lines.length ? `BT /F1 12 Tf 72 720 Td ${text.join(" ")} ET` : "0.5 g 72 72 200 200 re f";
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`,
      `<< /Length ${Buffer.byteLength(content, "latin1")} >>\nstream\n${content}\nendstream`,
    );
  });
  let pdf = "%PDF-1.4\n";
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets.push(Buffer.byteLength(pdf, "latin1"));
    pdf += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(pdf, "latin1");
  pdf += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  pdf += offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n \n`).join("");
  pdf += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, "latin1");
}

/**
 * The download's HTTP seam: the paper for arxiv.org, 403 for any other host.
 * @param body the bytes served
 * @returns a `DownloadFetch` that also lists the URLs it was asked for
 */
export function arxivPaperFetch(body: Uint8Array = makePaperPdf()): DownloadFetch & { requests: string[] } {
  const requests: string[] = [];
  const fetch = async (url: string): Promise<Response> => {
    requests.push(url);
    if (new URL(url).hostname !== "arxiv.org") return new Response("offline: no network", { status: 403 });
    return new Response(body, {
      headers: { "content-type": "application/pdf", "content-length": String(body.byteLength) },
    });
  };
  return Object.assign(fetch, { requests });
}

/** The download's DNS seam: every host is a public documentation address (RFC 5737), no network. */
export const offlineLookup: DownloadLookup = async () => [{ address: "203.0.113.10", family: 4 }];
