/** `sciencegate/servers`: the bundled MCP servers, to embed or run yourself. */
export { createSourcesServer, runSourcesServerStdio, SOURCES_SERVER_ID } from "./sources/sources-server.js";
