/**
 * A runtime over the offline demo's data directory, wired as the demo wires its own (loopback fake
 * providers, the reference LLM Wiki, the offline paper fetch, Europe PMC searches needing a human), so
 * that calls made during a browser test land in the same ledger, grants and jobs the demo left.
 */
import { join, resolve } from "node:path";
import { createGovernance, type Governance } from "sciencegate";
import { startReferenceWikiServer } from "sciencegate/testing";
import {
  createOfflinePaperFetch,
  demoPaperPdf,
  offlineLookup,
} from "../../../examples/demo/offline-paper-fetch.js";
import { startOfflineProviders } from "../../../examples/demo/offline-providers.js";

const root = resolve(import.meta.dirname, "../../..");

/** The runtime and what it needs closed after it. */
export interface DemoRuntime {
  governance: Governance;
  close(): Promise<void>;
}

/**
 * Opens the runtime over `dataDir`.
 * @param dataDir the demo's data directory
 * @param options `fetch` for downloads (default: the demo's offline paper fetch)
 */
export async function openDemoRuntime(
  dataDir: string,
  options: { fetch?: typeof fetch } = {},
): Promise<DemoRuntime> {
  const providers = await startOfflineProviders();
  const wiki = await startReferenceWikiServer({ pagesDir: join(root, "test/fixtures/wiki") });
  const governance = await createGovernance({
    env: { ...process.env, ...providers.env, SCIENCE_AGENT_LLM_WIKI_URL: wiki.origin },
    storage: { dataDir },
    downloads: {
      lookup: offlineLookup,
      fetch: options.fetch ?? createOfflinePaperFetch({ host: "arxiv.org", body: demoPaperPdf(), chunks: 4 }),
    },
    permissions: { policy: { isDangerous: (call) => (call.sourceId === "europe-pmc" ? true : undefined) } },
  });
  return {
    governance,
    async close() {
      try {
        await governance.close();
      } finally {
        await providers.server.close();
        await wiki.close();
      }
    },
  };
}
