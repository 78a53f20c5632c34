/**
 * The governed agent served by the LangGraph API server: `langgraph.json` beside this file names the
 * `graph` factory below; run `npx @langchain/langgraph-cli dev` in this folder and open it in LangGraph
 * Studio or Agent Chat UI. The server calls the factory for each run: the governance runtime (server
 * pool, ledger, child processes) is opened once per process by `governanceForProcess` and closed when
 * the server stops; the graph itself is cheap to build. Approval cards are langchain HITL requests
 * (the default card format, which Studio and Agent Chat UI render), download progress arrives on the
 * `custom` stream mode, and the server's checkpointer keeps the thread (and, with `promotionScope:
 * "thread"`, its promoted tools). Each thread is its own governance session: a grant given in one
 * thread never covers another (to share one per user, configure an auth handler and pass
 * `sessionId: (config) => config.configurable?.langgraph_auth_user_id`, which the server then writes).
 *
 * Offline, like `npm run demo`: a scripted model (`server-script.ts`), the bundled sources server as a
 * stdio child against loopback fake providers, and a paper fetch that serves a generated PDF for
 * arxiv.org only. In your own app, put your chat model and `createGovernance` options here instead.
 *
 * Environment: `SCIENCEGATE_HOME` (the data directory: ledger, grants, downloads; default
 * `./.sciencegate`) and `SCIENCEGATE_EXAMPLE_DANGEROUS_SOURCES` (comma-separated source ids whose calls
 * need an approval card; default `pubmed,europe-pmc`, so the script's parallel searches pause with two
 * cards; downloads always need one).
 */
import { createGovernance, createGovernedAgent, type Governance, governanceForProcess } from "sciencegate";
import { ScriptedChatModel } from "sciencegate/testing";
import { DEMO_SYSTEM_PROMPT } from "../demo/agent-step.js";
import { createOfflinePaperFetch, demoPaperPdf, offlineLookup } from "../demo/offline-paper-fetch.js";
import { startOfflineProviders } from "../demo/offline-providers.js";
import { serverScript } from "./server-script.js";

/** The governance runtime of this server process, opened by the first run. */
const governance = governanceForProcess(openOfflineGovernance);

/**
 * The graph factory `langgraph.json` names: the server calls it per run (and for schema and state
 * requests) and sets its own checkpointer on the result.
 * @returns the compiled governed agent
 */
export async function graph() {
  return createGovernedAgent({
    model: new ScriptedChatModel(serverScript),
    governance: await governance(),
    systemPrompt: DEMO_SYSTEM_PROMPT,
    promotionScope: "thread", // tools loaded with tool_search stay bound for the thread's later runs
  });
}

/** The bundled sources over the loopback fake providers; closing it stops the providers too. */
async function openOfflineGovernance(): Promise<Governance> {
  const providers = await startOfflineProviders();
  const dangerous = new Set(
    (process.env.SCIENCEGATE_EXAMPLE_DANGEROUS_SOURCES ?? "pubmed,europe-pmc")
      .split(",")
      .map((id) => id.trim())
      .filter(Boolean),
  );
  try {
    const runtime = await createGovernance({
      env: { ...process.env, ...providers.env },
      downloads: {
        lookup: offlineLookup,
        fetch: createOfflinePaperFetch({ host: "arxiv.org", body: demoPaperPdf(), chunks: 4 }),
      },
      permissions: { policy: { isDangerous: (call) => (dangerous.has(call.sourceId) ? true : undefined) } },
    });
    return {
      ...runtime,
      close: async () => {
        try {
          await runtime.close();
        } finally {
          await providers.server.close();
        }
      },
    };
  } catch (error) {
    await providers.server.close();
    throw error;
  }
}
