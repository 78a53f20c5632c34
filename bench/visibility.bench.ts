/**
 * Deferred tool visibility benchmark (issue 5): first-turn tool payload tokens, eager (every tool's
 * name, description and schema) against deferred (`tool_search` + `<available-deferred-tools>`), on
 * the built-in catalog and a generated one of 1,000 tools; `tool_search` latency at 10,000 tools
 * against a linear scan; and recall of the labelled query set on the built-in catalog.
 */
import { performance } from "node:perf_hooks";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { builtinManifestDir, loadManifestDir } from "../src/governance/manifests/manifest-loader.js";
import type {
  SourceKind,
  SourceManifest,
  ToolKind,
  ToolManifest,
} from "../src/governance/manifests/manifest-schema.js";
import { emptyPromotionState } from "../src/visibility/promotion.js";
import { deferredToolsPromptSection, routingHintsSection } from "../src/visibility/prompt-sections.js";
import { ToolSearchIndex, toolSearchIndexFor } from "../src/visibility/tool-search.js";
import { createToolSearchTool } from "../src/visibility/tool-search-tool.js";
import { type SurfaceTool, ToolSurface } from "../src/visibility/tool-surface.js";
import { evaluableQueries, type LabelledQuery } from "../test/visibility/retrieval-queries.js";
import { type BenchResult, metricWithTarget, ratioOf } from "./lib/bench-result.js";
import { summarizeLatencies } from "./lib/latency.js";

const GENERATED_TOOLS_TOKENS = 1_000;
const GENERATED_TOOLS_LATENCY = 10_000;
const TOOLS_PER_SOURCE = 10;
const WARMUP = 300;
const QUERIES = 3_000;
/** The linear-scan baseline takes tens of milliseconds a query, so it gets fewer. */
const BASELINE_QUERIES = 300;
/** Every n-th generated tool is looked for by four words of its own description. */
const SELF_RECALL_STRIDE = 20;
/** Targets of issue 5; printed next to the measurements, never enforced. */
const TARGET_DEFERRED_SHARE = 0.1;
const TARGET_SEARCH_P50_MS = 1;
const TARGET_RECALL_AT_3 = 0.9;

const encoder = new Tiktoken(o200kBase);
const tokens = (text: string) => encoder.encode(text).length;

/** The tools array of a chat request (OpenAI function format, which most providers mirror). */
function toolsArray(specs: readonly { name: string; description: string; parameters: unknown }[]): string {
  return JSON.stringify(specs.map((s) => ({ type: "function", function: s })));
}

interface PayloadTokens {
  eager: number;
  deferred: number;
  hints: number;
}

function payloadTokens(tools: readonly SurfaceTool[]): PayloadTokens {
  const eager = toolsArray(
    tools.map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema })),
  );
  const search = createToolSearchTool({ getTools: () => tools });
  const searchSpec = toolsArray([
    { name: search.name, description: search.description, parameters: toJsonSchema(search.schema) },
  ]);
  const state = emptyPromotionState();
  return {
    eager: tokens(eager),
    deferred: tokens(searchSpec) + tokens(deferredToolsPromptSection(tools, state)),
    hints: tokens(routingHintsSection(tools, state)),
  };
}

/** Deterministic PRNG (mulberry32), so every run measures the same catalog and queries. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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

/** Source manifests of `count` generated tools, shaped like the built-in ones. */
function generatedManifests(count: number, seed: number): SourceManifest[] {
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

/** A realistic mix: sentences, bare tool ids, full names, `+term` and `select:` queries. */
function queryMix(tools: readonly SurfaceTool[], count: number, seed: number): string[] {
  const rand = random(seed);
  const pick = () => tools[Math.floor(rand() * tools.length)] as SurfaceTool;
  const wordsOf = (tool: SurfaceTool, n: number) =>
    (tool.toolDescription ?? tool.description)
      .split(/\W+/)
      .filter((w) => w.length > 2)
      .slice(0, n);
  return Array.from({ length: count }, () => {
    const r = rand();
    const tool = pick();
    if (r < 0.6) return ["find", ...wordsOf(tool, 2 + Math.floor(rand() * 4)), "about the"].join(" ");
    if (r < 0.75) return tool.toolId;
    if (r < 0.85) return tool.name;
    if (r < 0.95) return `+${wordsOf(tool, 1).join("")} ${wordsOf(pick(), 2).join(" ")}`;
    return `select:${tool.name},${pick().name}`;
  });
}

/** The baseline: no index, every query scans every tool's text. */
function linearScan(tools: readonly SurfaceTool[]): (query: string) => string[] {
  const texts = tools.map((t) => `${t.name} ${t.description}`.toLowerCase());
  return (query) => {
    const terms = query.toLowerCase().split(/\W+/).filter(Boolean);
    const scored = texts.map((text, i) => [i, terms.filter((term) => text.includes(term)).length] as const);
    return scored
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([i]) => tools[i]?.name ?? "");
  };
}

function time(queries: readonly string[], run: (query: string) => unknown): number[] {
  for (let i = 0; i < WARMUP; i++) run(queries[i % queries.length] ?? "");
  return queries.map((query) => {
    const start = performance.now();
    run(query);
    return performance.now() - start;
  });
}

/** Share of sampled tools found in the top 5 by four words of their own description. */
function selfRecall(tools: readonly SurfaceTool[], index: ToolSearchIndex): number {
  let found = 0;
  let total = 0;
  for (let i = 0; i < tools.length; i += SELF_RECALL_STRIDE) {
    const tool = tools[i] as SurfaceTool;
    const words = (tool.toolDescription ?? "").split(/\W+/).filter((w) => w.length > 2);
    const query = [words[3], words[7], words[11], words[15]].filter(Boolean).join(" ");
    total++;
    if (index.search(query, 5).some((hit) => hit.name === tool.name)) found++;
  }
  return found / total;
}

function recall(
  index: ToolSearchIndex,
  labelled: readonly LabelledQuery[],
): { at3: number; at5: number; queries: number } {
  let at3 = 0;
  let at5 = 0;
  for (const { query, expected } of labelled) {
    const names = index.search(query, 5).map((h) => h.name);
    if (names.slice(0, 3).some((n) => expected.includes(n))) at3++;
    if (names.some((n) => expected.includes(n))) at5++;
  }
  const n = labelled.length;
  return { at3: at3 / n, at5: at5 / n, queries: n };
}

/**
 * Runs the visibility benchmark.
 * @returns token counts, search latency, recall, with targets and ratios
 */
export async function run(): Promise<BenchResult> {
  const manifests = await loadManifestDir(builtinManifestDir());
  const builtin = ToolSurface.fromManifests(manifests);
  const labelled = evaluableQueries(manifests.map((m) => m.id));
  const generated = ToolSurface.fromManifests(generatedManifests(GENERATED_TOOLS_TOKENS, 1));
  const builtinTokens = payloadTokens(builtin);
  const generatedTokens = payloadTokens(generated);

  const large = ToolSurface.fromManifests(generatedManifests(GENERATED_TOOLS_LATENCY, 2));
  const buildStart = performance.now();
  const index = toolSearchIndexFor(large);
  const buildMs = performance.now() - buildStart;
  const queries = queryMix(large, QUERIES, 3);
  const scan = linearScan(large);
  const ours = summarizeLatencies(time(queries, (q) => index.search(q, 5)));
  const baseline = summarizeLatencies(time(queries.slice(0, BASELINE_QUERIES), scan));
  const prunedSelfRecall = selfRecall(large, index);
  const fullSelfRecall = selfRecall(
    large,
    new ToolSearchIndex(large, { postingBudget: Number.POSITIVE_INFINITY }),
  );
  const builtinIndex = toolSearchIndexFor(builtin);
  const builtinLatency = summarizeLatencies(
    time(
      labelled.map((q) => q.query),
      (q) => builtinIndex.search(q),
    ),
  );
  const quality = recall(builtinIndex, labelled);

  const share = (t: PayloadTokens) => t.deferred / t.eager;
  return {
    name: "visibility",
    description: "First-turn tool tokens eager vs deferred; tool_search latency at 10,000 tools; recall",
    parameters: {
      builtinTools: builtin.length,
      generatedToolsForTokens: generated.length,
      generatedToolsForLatency: large.length,
      queries: QUERIES,
      warmup: WARMUP,
      labelledQueries: quality.queries,
      tokenizer: "o200k_base (js-tiktoken)",
    },
    metrics: [
      { name: "built-in: eager first-turn tokens", value: builtinTokens.eager, unit: "tokens" },
      { name: "built-in: deferred first-turn tokens", value: builtinTokens.deferred, unit: "tokens" },
      metricWithTarget("built-in: deferred / eager", share(builtinTokens), "share", TARGET_DEFERRED_SHARE),
      { name: "built-in: routing hints (extra, optional)", value: builtinTokens.hints, unit: "tokens" },
      { name: "1,000 tools: eager first-turn tokens", value: generatedTokens.eager, unit: "tokens" },
      { name: "1,000 tools: deferred first-turn tokens", value: generatedTokens.deferred, unit: "tokens" },
      { name: "1,000 tools: deferred / eager", value: share(generatedTokens), unit: "share" },
      { name: "10,000 tools: index build", value: buildMs, unit: "ms" },
      metricWithTarget("10,000 tools: tool_search p50", ours.p50, "ms", TARGET_SEARCH_P50_MS),
      { name: "10,000 tools: tool_search p99", value: ours.p99, unit: "ms" },
      { name: "10,000 tools: linear scan p50", value: baseline.p50, unit: "ms" },
      {
        name: "10,000 tools: self-retrieval recall@5 (posting budget)",
        value: prunedSelfRecall,
        unit: "share",
      },
      { name: "10,000 tools: self-retrieval recall@5 (unbounded)", value: fullSelfRecall, unit: "share" },
      { name: "built-in: tool_search p50", value: builtinLatency.p50, unit: "ms" },
      { name: "built-in: recall@3", value: quality.at3, unit: "share" },
      { name: "built-in: recall@5", value: quality.at5, unit: "share" },
      metricWithTarget("built-in: recall@3 miss rate", 1 - quality.at3, "share", 1 - TARGET_RECALL_AT_3),
    ],
    ratios: [
      ratioOf(
        "first-turn tokens, built-in: deferred / eager",
        builtinTokens.deferred,
        builtinTokens.eager,
        "tokens",
      ),
      ratioOf(
        "first-turn tokens, 1,000 tools: deferred / eager",
        generatedTokens.deferred,
        generatedTokens.eager,
        "tokens",
      ),
      ratioOf("search p50 at 10,000 tools: index / linear scan", ours.p50, baseline.p50, "ms"),
      ratioOf("search p99 at 10,000 tools: index / linear scan", ours.p99, baseline.p99, "ms"),
      ratioOf(
        "self-retrieval recall@5 at 10,000 tools: budget / unbounded",
        prunedSelfRecall,
        fullSelfRecall,
        "share",
      ),
    ],
    notes: [
      "Eager = tools array (OpenAI function format) of every tool with its composed description and schema.",
      "Deferred = tool_search in that format + the <available-deferred-tools> section; routing hints are listed apart.",
      `Latency: ${WARMUP} warm-up queries, then ${QUERIES} sequential searches (60% sentences, 15% bare ids, ` +
        `10% full names, 10% +term, 5% select:) on a prebuilt index; the baseline (${BASELINE_QUERIES} queries) ` +
        "scans every tool's text.",
      "Self-retrieval: every 20th generated tool searched by four words of its own description; the posting " +
        "budget (1,000) trades a little of it for latency at 10,000 tools and does not touch the built-in catalog.",
      `Recall over ${quality.queries} labelled requests (test/visibility/retrieval-queries.ts).`,
    ],
  };
}
