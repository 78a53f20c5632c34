/** Connects a real MCP client to the LLM Wiki bridge (in memory) in front of the reference wiki. */
import { resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  createLlmWikiServer,
  type LlmWikiServerOptions,
} from "../../../src/servers/llm-wiki/llm-wiki-server.js";
import { type ReferenceWiki, startReferenceWikiServer } from "../../../src/testing/reference-wiki-server.js";

/** The fixture pages of the reference wiki. */
export const WIKI_PAGES = resolve(import.meta.dirname, "../../fixtures/wiki");

/** A bridge client plus the wiki behind it. */
export interface WikiHarness {
  wiki: ReferenceWiki;
  client: Client;
  /** Calls a bridge tool. */
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * Starts the reference wiki and a bridge pointed at it.
 * @param options wiki token, and the env/fetch the bridge gets (URL defaults to the wiki's origin)
 */
export async function startWikiHarness(
  options: { wikiToken?: string; env?: Record<string, string>; bridge?: LlmWikiServerOptions } = {},
): Promise<WikiHarness> {
  const wiki = await startReferenceWikiServer({
    pagesDir: WIKI_PAGES,
    ...(options.wikiToken ? { token: options.wikiToken } : {}),
  });
  const server = createLlmWikiServer({
    ...options.bridge,
    env: { SCIENCE_AGENT_LLM_WIKI_URL: wiki.origin, ...options.env },
  });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "wiki-test", version: "1.0.0" });
  await client.connect(clientSide);
  return {
    wiki,
    client,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: async () => {
      await client.close();
      await wiki.close();
    },
  };
}

/** The structured content of a successful call, or the structured error of a failed one. */
// biome-ignore lint/suspicious/noExplicitAny: tests read deep into untyped JSON results
export function structured(result: CallToolResult): Record<string, any> {
  // biome-ignore lint/suspicious/noExplicitAny: as above
  return result.structuredContent as Record<string, any>;
}
