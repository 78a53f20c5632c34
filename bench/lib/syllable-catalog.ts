/**
 * A catalog of made-up words for the `tool_search` latency and self-retrieval measures: a
 * Zipf-like vocabulary of syllable words, so that common words are in thousands of tools and rare
 * ones in a few (what the posting budget is about). Token counts use the realistic catalog of
 * `test/visibility/synthetic-catalog.ts` instead: syllable words cost several tokens each.
 */
import type {
  SourceKind,
  SourceManifest,
  ToolKind,
  ToolManifest,
} from "../../src/governance/manifests/manifest-schema.js";
import { random } from "../../test/visibility/synthetic-catalog.js";

const TOOLS_PER_SOURCE = 10;
const SYLLABLES = "ka ro mi tu ne sa lo vi de ba pri gen cy tol ase ome ics ine ar ol um id ex on".split(" ");
const VERBS = ["search", "lookup", "fetch", "list", "find", "prepare", "analyze", "get"];
const PARAMS = [
  "query",
  "id",
  "ids",
  "max_results",
  "start",
  "species",
  "format",
  "cursor",
  "sort",
  "region",
];

/** A vocabulary with a Zipf-like frequency: early words are common, late words rare. */
function vocabulary(rand: () => number, size: number): () => string {
  const words = new Set<string>();
  while (words.size < size) {
    const n = 2 + Math.floor(rand() * 3);
    words.add(Array.from({ length: n }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]).join(""));
  }
  const list = [...words];
  return () => list[Math.floor(list.length * rand() ** 2.5)] ?? "x";
}

const TOOL_KINDS: Record<string, ToolKind> = {
  search: "search",
  find: "search",
  list: "search",
  prepare: "artifact-plan",
};
const SOURCE_KINDS: SourceKind[] = ["literature", "protein", "structure", "genomics", "pathway", "dataset"];

/**
 * Source manifests of `count` generated tools, shaped like the built-in ones, ten per source.
 * @param count how many tools
 * @param seed PRNG seed
 * @returns the manifests
 */
export function syllableManifests(count: number, seed: number): SourceManifest[] {
  const rand = random(seed);
  const word = vocabulary(rand, 6_000);
  const words = (min: number, max: number) =>
    Array.from({ length: min + Math.floor(rand() * (max - min + 1)) }, word).join(" ");
  return Array.from({ length: Math.ceil(count / TOOLS_PER_SOURCE) }, (_, s): SourceManifest => {
    const id = `gen-${s}-${word()}`;
    const size = Math.min(TOOLS_PER_SOURCE, count - s * TOOLS_PER_SOURCE);
    const tools = Array.from({ length: size }, (_, i): ToolManifest => {
      const verb = VERBS[i % VERBS.length] ?? "search";
      const toolId = `${verb}_${word()}_${i}`;
      const params = PARAMS.filter(() => rand() < 0.35);
      const properties = Object.fromEntries(
        (params.length ? params : ["query"]).map((p) => [p, { type: "string", description: words(6, 14) }]),
      );
      return {
        id: toolId,
        description: `${words(18, 40)}.`,
        kind: TOOL_KINDS[verb] ?? "lookup",
        mcpToolName: `${id}_${toolId}`,
        inputSchema: { type: "object", properties, required: [Object.keys(properties)[0] ?? "query"] },
        readOnly: true,
        permission: { action: `${id}:${toolId}`, resourceTemplate: id, summaryTemplate: "run" },
        retryPolicy: {},
        timeoutMs: 30_000,
        routing: { keywords: words(2, 6).split(" "), mode: rand() < 0.5 ? "prefer" : "off", priority: 50 },
        promptFragment: `${toolId}: ${words(8, 20)}.`,
      };
    });
    const prompt = {
      summary: `${words(15, 30)}.`,
      citationPolicy: `${words(10, 25)}.`,
      caveats: [`${words(8, 20)}.`],
    };
    const governance = {
      attribution: id,
      license: "CC0-1.0",
      termsUrl: "https://example.org/terms",
      dataClassification: "public" as const,
      networkHosts: ["example.org"],
      maxResponseBytes: 1_000_000,
      rateLimitGroup: id,
    };
    const kind = SOURCE_KINDS[s % SOURCE_KINDS.length] ?? "dataset";
    const cache = { enabled: true, ttlSeconds: 60 };
    return {
      id,
      displayName: id,
      description: `${words(10, 20)}.`,
      publisher: "generated",
      version: "1",
      kind,
      enabledByDefault: true,
      transport: { mcpServerId: "generated" },
      cache,
      prompt,
      governance,
      tools,
    };
  });
}
