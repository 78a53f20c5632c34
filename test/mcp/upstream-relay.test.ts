import type { ElicitRequestParams, LoggingMessageNotificationParams } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import { ServerPool } from "../../src/mcp/server-pool.js";
import type { UpstreamRelay, UpstreamRequestContext } from "../../src/mcp/types.js";
import { serverConfig } from "./server-configs.js";
import { effectsFile, httpUpstream, stdioUpstream } from "./upstream-fixture.js";

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

/** A relay that answers from a list and records what it was asked. */
function scriptedRelay(answers: Record<string, string | number | boolean>[] = []) {
  const asked: { params: ElicitRequestParams; context: UpstreamRequestContext }[] = [];
  const logs: LoggingMessageNotificationParams[] = [];
  const relay: UpstreamRelay = {
    elicit: (params, context) => {
      asked.push({ params, context });
      const content = answers[asked.length - 1];
      return content === undefined ? { action: "decline" } : { action: "accept", content };
    },
    onLog: (params) => logs.push(params),
  };
  return { relay, asked, logs };
}

type Setup = { name: string; config: () => ServerConfig; era: "2025-11-25" | "2026-07-28" };

let http: Awaited<ReturnType<typeof httpUpstream>>;
beforeAll(async () => {
  http = await httpUpstream();
});
afterAll(async () => {
  await http?.stop();
});

const setups: Setup[] = [
  { name: "stdio, 2025-11-25", config: () => stdioUpstream("up"), era: "2025-11-25" },
  {
    name: "stdio, 2026-07-28",
    config: () => stdioUpstream("up", { config: { protocol: "2026-07-28" } }),
    era: "2026-07-28",
  },
  {
    name: "http, 2025-11-25",
    config: () => serverConfig({ id: "up", transport: "http", url: http.url, protocol: "2025-11-25" }),
    era: "2025-11-25",
  },
  {
    name: "http, 2026-07-28",
    config: () => serverConfig({ id: "up", transport: "http", url: http.url }),
    era: "2026-07-28",
  },
];

describe.each(setups)("what the upstream server asks reaches the call's relay ($name)", (setup) => {
  let pool: ServerPool;
  beforeAll(() => {
    pool = new ServerPool([{ ...setup.config(), roots: ["file:///data/papers", "file:///tmp/a%20b"] }], {
      upstreamRequests: { sampling: true },
    });
  });
  afterAll(async () => {
    await pool?.close();
  });

  test("an elicitation is answered by the relay and the call goes on", async () => {
    const { relay, asked } = scriptedRelay([{ name: "Ada" }]);
    expect(text(await pool.callTool("up", "ask_name", {}, { relay }))).toBe("Hello, Ada!");
    expect(pool.state("up").era).toBe(setup.era);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.params).toMatchObject({ message: "What is your name?" });
    expect(asked[0]?.context).toMatchObject({ serverId: "up", era: setup.era, index: 1 });
    if (setup.era === "2026-07-28") {
      expect(asked[0]?.context.round).toMatchObject({
        index: 0,
        inputRequests: { name: expect.any(Object) },
      });
    } else expect(asked[0]?.context.round).toBeUndefined();
  });

  test("two questions in one call are numbered, and the second sees the first answer", async () => {
    const { relay, asked } = scriptedRelay([{ name: "Ada" }, { colour: "blue" }]);
    expect(text(await pool.callTool("up", "two_questions", {}, { relay }))).toBe("Ada likes blue");
    expect(asked.map((entry) => [entry.context.index, entry.params.message])).toEqual([
      [1, "Your name?"],
      [2, "Ada, your favourite colour?"],
    ]);
  });

  test("without a relay the server hears cancel, so nobody is asked and nothing is assumed", async () => {
    const result = await pool.callTool("up", "ask_name", {});
    expect(result.isError).toBe(true);
    expect(text(result)).toBe("the user chose cancel");
  });

  test("a decline reaches the server as a decline", async () => {
    const { relay } = scriptedRelay([]);
    const result = await pool.callTool("up", "confirm_action", { action: "delete" }, { relay });
    expect(text(result)).toBe("not confirmed (decline)");
  });

  test("a URL elicitation reaches the relay with its URL", async () => {
    const asked: ElicitRequestParams[] = [];
    const relay: UpstreamRelay = {
      elicit: (params) => {
        asked.push(params);
        return { action: "accept" };
      },
    };
    expect(text(await pool.callTool("up", "open_url", {}, { relay }))).toBe("visit: accept");
    expect(asked[0]).toMatchObject({ mode: "url", url: "https://example.org/consent" });
  });

  test("a sampling request is answered by the relay's model", async () => {
    const relay: UpstreamRelay = {
      sample: (params) => ({
        model: "scripted",
        role: "assistant",
        content: { type: "text", text: `(${params.messages.length} message, max ${params.maxTokens})` },
      }),
    };
    expect(text(await pool.callTool("up", "summarize", { text: "long" }, { relay }))).toBe(
      "summary from scripted: (1 message, max 100)",
    );
  });

  test("roots are the configured ones", async () => {
    const roots = JSON.parse(text(await pool.callTool("up", "show_roots", {})));
    expect(roots).toEqual([
      { uri: "file:///data/papers", name: "papers" },
      { uri: "file:///tmp/a%20b", name: "a b" },
    ]);
  });

  test("progress and log messages of the call reach its callbacks", async () => {
    const { relay, logs } = scriptedRelay();
    const progress: number[] = [];
    const result = await pool.callTool(
      "up",
      "progress",
      { steps: 3 },
      { relay, onProgress: ({ progress: step }) => progress.push(step) },
    );
    expect(text(result)).toBe("done after 3 steps");
    expect(progress).toEqual([1, 2, 3]);
    expect(logs.map((log) => log.data)).toEqual([
      "working on step 1",
      "working on step 2",
      "working on step 3",
    ]);
  });

  test("a relay that throws ends the call with its error", async () => {
    const stop = new Error("ask a human first");
    const relay: UpstreamRelay = {
      elicit: () => {
        throw stop;
      },
    };
    await expect(pool.callTool("up", "confirm_action", { action: "x" }, { relay })).rejects.toBe(stop);
    // The connection is still usable.
    expect(text(await pool.callTool("up", "echo", { text: "still here" }))).toBe("still here");
  });
});

describe("sampling is declared only when callers answer it", () => {
  test.each(["2025-11-25", "2026-07-28"] as const)(
    "on %s a server asking anyway gets an error, not an answer",
    async (protocol) => {
      const pool = new ServerPool([stdioUpstream("up", { config: { protocol } })]);
      try {
        const client = await pool.getClient("up");
        expect(client.getNegotiatedProtocolVersion()).toBe(protocol);
        const outcome = await pool.callTool("up", "summarize", { text: "t" }).then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        );
        if ("result" in outcome) {
          expect(outcome.result.isError).toBe(true);
          expect(JSON.stringify(outcome.result.content)).toMatch(/sampling/i);
        } else expect(String(outcome.error)).toMatch(/sampling/i);
      } finally {
        await pool.close();
      }
    },
  );
});

describe("continuing a 2026-07-28 round in another call", () => {
  test("a stopped call is continued from its round's state without starting over", async () => {
    const effects = effectsFile();
    const pool = new ServerPool([
      stdioUpstream("up", { effects: effects.path, config: { protocol: "2026-07-28" } }),
    ]);
    try {
      let stopped: UpstreamRequestContext | undefined;
      const stopAtSecond: UpstreamRelay = {
        elicit: (_params, context) => {
          if (context.index === 1) return { action: "accept", content: { name: "Ada" } };
          stopped = context;
          throw new Error("paused");
        },
      };
      await expect(pool.callTool("up", "two_questions", {}, { relay: stopAtSecond })).rejects.toThrow(
        "paused",
      );
      expect(stopped?.round?.requestState).toEqual(expect.any(String));
      const attemptsBefore = effects.lines().filter((line) => line === "attempt two_questions").length;
      const { relay, asked } = scriptedRelay([{ colour: "green" }]);
      const round = stopped?.round;
      if (round === undefined) throw new Error("no round");
      const result = await pool.callTool(
        "up",
        "two_questions",
        {},
        {
          relay,
          continueFrom: { ...round, questionsBefore: 1 },
        },
      );
      expect(text(result)).toBe("Ada likes green");
      expect(asked.map((entry) => entry.context.index)).toEqual([2]);
      // One more attempt upstream: the retry with the answer, not the first round again.
      expect(effects.lines().filter((line) => line === "attempt two_questions").length).toBe(
        attemptsBefore + 1,
      );
    } finally {
      await pool.close();
    }
  });
});

describe("attributing a 2025-era request when several calls run over stdio", () => {
  test("a question that cannot be attributed is answered cancel, and no relay is asked", async () => {
    const pool = new ServerPool([stdioUpstream("up")]);
    try {
      await pool.listTools("up");
      const first = scriptedRelay([{ name: "A" }]);
      const second = scriptedRelay([{ name: "B" }]);
      const results = await Promise.all([
        pool.callTool("up", "ask_name", {}, { relay: first.relay }),
        pool.callTool("up", "ask_name", {}, { relay: second.relay }),
      ]);
      expect(results.map(text)).toEqual(["the user chose cancel", "the user chose cancel"]);
      expect(first.asked.length + second.asked.length).toBe(0);
    } finally {
      await pool.close();
    }
  });
});
