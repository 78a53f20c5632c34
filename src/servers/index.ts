/** `sciencegate/servers`: the bundled MCP servers, to embed or run yourself. */

export {
  createLlmWikiServer,
  LLM_WIKI_SERVER_ID,
  runLlmWikiServerStdio,
} from "./llm-wiki/llm-wiki-server.js";
export { createSourcesServer, runSourcesServerStdio, SOURCES_SERVER_ID } from "./sources/sources-server.js";
