import { describe, expect, test } from "vitest";
import { createOfflinePaperFetch, demoPaperPdf } from "../../examples/demo/offline-paper-fetch.js";

async function chunksOf(response: Response): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return chunks;
}

describe("createOfflinePaperFetch", () => {
  const body = new TextEncoder().encode("%PDF-1.4 0123456789abcdef");

  test("serves the body for its host in the asked number of chunks", async () => {
    const fetch = createOfflinePaperFetch({ host: "arxiv.org", body, chunks: 3 });
    const response = await fetch("https://arxiv.org/pdf/2403.01234v2", {});
    expect(response.status).toBe(200);
    expect(response.headers.get("content-length")).toBe(String(body.byteLength));
    const chunks = await chunksOf(response);
    expect(chunks).toHaveLength(3);
    expect(Buffer.concat(chunks)).toEqual(Buffer.from(body));
    expect(fetch.requests).toEqual(["https://arxiv.org/pdf/2403.01234v2"]);
  });

  test("refuses every other host: nothing leaves the machine", async () => {
    const fetch = createOfflinePaperFetch({ host: "arxiv.org", body });
    for (const url of ["https://export.arxiv.org/api/query", "https://evil.example/arxiv.org.pdf"]) {
      expect((await fetch(url, {})).status).toBe(403);
    }
  });

  test("a Range request resumes from the offset with a 206", async () => {
    const fetch = createOfflinePaperFetch({ host: "arxiv.org", body, chunks: 2 });
    const response = await fetch("https://arxiv.org/pdf/x", { headers: { range: "bytes=9-" } });
    expect(response.status).toBe(206);
    expect(Buffer.concat(await chunksOf(response)).toString()).toBe("0123456789abcdef");
  });

  test("the demo paper is a PDF", () => {
    expect(demoPaperPdf().subarray(0, 5).toString("latin1")).toBe("%PDF-");
  });
});
