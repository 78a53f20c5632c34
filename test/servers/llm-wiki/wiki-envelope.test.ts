import { describe, expect, test } from "vitest";
import { type EnvelopeContext, normalizeToolResult } from "../../../src/governance/envelope/envelope.js";

const ORIGIN = "http://127.0.0.1:8100";

function record(url: string) {
  const citation = { label: `[wiki:x](${url})`, url, version: "a".repeat(64) };
  return {
    identifier: "x",
    identifierType: "wiki-page",
    title: "X",
    url,
    source: "llm-wiki",
    citations: [citation],
    primaryCitation: citation,
    contentScope: "curated-record",
    crossReferences: [{ identifier: "<script>x</script>", identifierType: "source-ref" }],
    fullTextRetrieved: false,
    warnings: [],
  };
}

function normalize(urls: string[], extra: Partial<EnvelopeContext> = {}, artifacts?: unknown[]) {
  const structuredContent = { records: urls.map(record), warnings: [], ...(artifacts ? { artifacts } : {}) };
  return normalizeToolResult(
    { content: [], structuredContent },
    {
      sourceId: "llm-wiki",
      toolId: "get_page",
      networkHosts: [],
      license: "l",
      attribution: "a",
      now: new Date(0),
      ...extra,
    },
  );
}

describe("envelope allowedOrigins (the private wiki origin)", () => {
  test("http citations on the configured origin pass; without the origin the HTTPS rule drops them", () => {
    const url = `${ORIGIN}/api/v1/wiki/x`;
    expect(normalize([url], { allowedOrigins: [ORIGIN] }).records.map((r) => r.url)).toEqual([url]);
    const strict = normalize([url]);
    expect(strict.records).toEqual([]);
    expect(strict.warnings[0]).toContain("instead of https");
  });

  test.each([
    ["another port", "http://127.0.0.1:9999/api/v1/wiki/x"],
    ["another host", "http://evil.example.com/api/v1/wiki/x"],
    ["https on the same host", "https://127.0.0.1:8100/api/v1/wiki/x"],
    ["user information", "http://user:pw@127.0.0.1:8100/api/v1/wiki/x"],
  ])("a URL with %s is still dropped", (_what, url) => {
    expect(normalize([url], { allowedOrigins: [ORIGIN] }).records).toEqual([]);
  });

  test("artifact candidates never use the private origin", () => {
    const candidate = {
      candidateId: "c1",
      sourceId: "llm-wiki",
      sourceRecordId: "x",
      url: `${ORIGIN}/file.pdf`,
      format: "pdf",
      kind: "paper",
    };
    const out = normalize([`${ORIGIN}/api/v1/wiki/x`], { allowedOrigins: [ORIGIN] }, [candidate]);
    expect(out.records).toHaveLength(1);
    expect(out.artifacts).toEqual([]);
  });
});
