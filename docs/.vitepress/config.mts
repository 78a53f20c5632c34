import type { Plugin } from "vite";
import { defineConfig } from "vitepress";

/**
 * VitePress 1 writes each page's "lean" chunk (the one a browser loads first) by assigning to the
 * bundle, which Rolldown (Vite 8, which this repository pins) ignores: without this plugin the first
 * page a visitor opens 404s on its `.lean.js` and never hydrates. It emits the full page chunk under
 * the lean name instead (the lean one only strips static HTML the page already has).
 */
const leanPageChunks: Plugin = {
  name: "sciencegate:lean-page-chunks",
  enforce: "post",
  generateBundle(_options, bundle) {
    for (const chunk of Object.values(bundle)) {
      if (chunk.type !== "chunk" || !chunk.isEntry || !chunk.facadeModuleId?.endsWith(".md")) continue;
      const fileName = chunk.fileName.replace(/\.js$/, ".lean.js");
      if (fileName !== chunk.fileName && !(fileName in bundle))
        this.emitFile({ type: "asset", fileName, source: chunk.code });
    }
  },
};

const sources = [
  ["PubMed", "pubmed"],
  ["Europe PMC", "europe-pmc"],
  ["arXiv", "arxiv"],
  ["bioRxiv and medRxiv", "biorxiv"],
  ["ClinVar", "clinvar"],
  ["UniProt", "uniprot"],
  ["Ensembl", "ensembl"],
  ["Reactome", "reactome"],
  ["PDB", "pdb"],
  ["ChEMBL", "chembl"],
  ["GEO", "geo"],
] as const;

// Built offline by `npm run docs` (after typedoc has written the API reference into public/api).
// Dead internal links fail the build: VitePress's default, kept on on purpose.
export default defineConfig({
  title: "Sciencegate",
  description:
    "Governed access to scientific MCP data sources for LangGraph.js agents: permission, rate limits, cache, audit and citations on every tool call.",
  cleanUrls: false,
  lastUpdated: false,
  // The source pages keep their GitHub-friendly README.md as the folder's index.
  rewrites: { "sources/README.md": "sources/index.md" },
  vite: { plugins: [leanPageChunks] },
  themeConfig: {
    search: { provider: "local" },
    outline: [2, 3],
    nav: [
      { text: "Get started", link: "/guide/get-started" },
      { text: "Concepts", link: "/concepts/governed-path" },
      { text: "Executors", link: "/executors/" },
      { text: "Reference", link: "/reference/extensions-config" },
      { text: "API", link: "/api/index.html", target: "_self" },
    ],
    sidebar: [
      {
        text: "Get started",
        items: [
          { text: "Get started", link: "/guide/get-started" },
          { text: "Testing your app", link: "/guide/testing" },
        ],
      },
      {
        text: "Concepts",
        items: [
          { text: "The governed path", link: "/concepts/governed-path" },
          { text: "Sessions and threads", link: "/concepts/sessions-and-threads" },
          { text: "Approvals", link: "/concepts/approvals" },
          { text: "Deferred tools", link: "/concepts/deferred-tools" },
          { text: "The ledger", link: "/concepts/ledger" },
          { text: "Downloads and evidence", link: "/concepts/evidence" },
          { text: "Research objects", link: "/concepts/research-objects" },
        ],
      },
      {
        text: "Executors",
        items: [
          { text: "Choosing an executor", link: "/executors/" },
          { text: "StateGraph node set", link: "/executors/state-graph" },
          { text: "createGovernedAgent", link: "/executors/create-governed-agent" },
          { text: "createAgent middleware", link: "/executors/create-agent" },
          { text: "Swarms (fixed tool table)", link: "/executors/swarm" },
          { text: "ToolNode and other runners", link: "/executors/tool-node" },
          { text: "MultiServerMCPClient", link: "/executors/multi-server-client" },
          { text: "Science ADK (science.toml)", link: "/executors/science-adk" },
          { text: "LLM Wiki bridge", link: "/executors/llm-wiki" },
        ],
      },
      {
        text: "Gateway and console",
        items: [
          { text: "The MCP gateway", link: "/gateway/" },
          { text: "Gateway over HTTP", link: "/gateway/http" },
          { text: "Protocol revisions", link: "/gateway/revisions" },
          { text: "Gateway in an MCP client", link: "/gateway/clients" },
          { text: "The console", link: "/console" },
          { text: "Identity (OAuth, several users)", link: "/identity" },
        ],
      },
      {
        text: "Deployment",
        items: [
          { text: "LangGraph server", link: "/deployment/langgraph-server" },
          { text: "PostgreSQL and replicas", link: "/deployment/postgresql" },
          { text: "Rate limits across replicas", link: "/deployment/replicas" },
          { text: "OpenTelemetry", link: "/deployment/opentelemetry" },
          { text: "LangSmith", link: "/deployment/langsmith" },
        ],
      },
      {
        text: "Science sources",
        collapsed: true,
        items: [
          { text: "Overview", link: "/science-sources" },
          { text: "Records and real samples", link: "/sources/" },
          ...sources.map(([text, id]) => ({ text, link: `/sources/${id}` })),
        ],
      },
      {
        text: "Reference",
        items: [
          { text: "extensions_config.json", link: "/reference/extensions-config" },
          { text: "science.toml", link: "/executors/science-adk" },
          { text: "Source manifests", link: "/reference/manifests" },
          { text: "Environment variables", link: "/reference/environment" },
          { text: "CLI", link: "/reference/cli" },
          { text: "API reference", link: "/api/index.html", target: "_self" },
        ],
      },
      {
        text: "Running it",
        items: [
          { text: "Security model", link: "/security" },
          { text: "Operations", link: "/operations" },
          { text: "Performance", link: "/performance" },
          { text: "Reliability", link: "/reliability" },
          { text: "Troubleshooting", link: "/troubleshooting" },
        ],
      },
    ],
  },
});
