import { PassThrough } from "node:stream";
import type { Interrupt } from "@langchain/langgraph";
import { describe, expect, test } from "vitest";
import {
  answerCards,
  askedBecause,
  isCardInterrupt,
  parseCardAnswer,
} from "../../examples/demo/approval-prompt.js";
import type { PermissionCard } from "../../src/governance/permissions/permission-types.js";

function card(id: string, summary: string): Interrupt<PermissionCard> & { id: string } {
  return {
    id,
    value: {
      type: "permission",
      requestId: `req-${id}`,
      action: "artifact:download",
      resource: "artifact:arxiv",
      summary,
      sourceId: "arxiv",
      toolId: "artifact_download",
      args: {},
      risk: "download",
      allowedDecisions: ["allow_once", "allow_matching", "allow_always", "deny"],
      matchingScope: {
        resource: "artifact:arxiv",
        description:
          "every artifact:download call on a resource starting with artifact:arxiv:, for the rest of this session",
      },
    } as PermissionCard,
  };
}

describe("parseCardAnswer", () => {
  test.each([
    ["a", "allow_once"],
    ["M", "allow_matching"],
    ["always", "allow_always"],
    [" d ", "deny"],
    ["", "allow_once"],
    ["allow_once", "allow_once"],
    ["deny", "deny"],
    ["x", undefined],
    ["yes", undefined],
    ["constructor", undefined],
  ])("%j → %s", (typed, decision) => {
    expect(parseCardAnswer(typed)).toBe(decision);
  });
});

describe("askedBecause", () => {
  test.each([
    ["download", /^downloads always need approval \(Sciencegate's default rule\)$/],
    ["write", /not declared read-only/],
    ["private-data", /not public/],
    ["read", /^the app's own permission policy says so: .* every arxiv call dangerous/],
  ] as const)("a %s card says why it appears", (risk, reason) => {
    expect(askedBecause({ ...(card("i", "x").value as PermissionCard), risk })).toMatch(reason);
  });
});

describe("answerCards", () => {
  test("without a terminal every card gets the script's answer, and the answer is shown", async () => {
    const lines: string[] = [];
    const answers = await answerCards([card("i1", "Download paper.pdf"), card("i2", "Search Europe PMC")], {
      interactive: false,
      write: (line) => lines.push(line),
    });
    expect(answers).toEqual({ i1: { decision: "allow_matching" }, i2: { decision: "allow_matching" } });
    expect(lines.join("\n")).toContain("Download paper.pdf");
    expect(lines.filter((line) => line.includes("→ allow_matching"))).toHaveLength(2);
  });

  test("in a terminal each card is asked in turn; a bad answer is asked again; Enter means allow once", async () => {
    const input = new PassThrough();
    const lines: string[] = [];
    const pending = answerCards([card("i1", "first"), card("i2", "second"), card("i3", "third")], {
      interactive: true,
      input,
      write: (line) => lines.push(line),
    });
    input.write("what?\nd\n");
    await new Promise((resolve) => setImmediate(resolve));
    input.write("a\n");
    await new Promise((resolve) => setImmediate(resolve));
    input.write("\n");
    expect(await pending).toEqual({
      i1: { decision: "deny" },
      i2: { decision: "allow_once" },
      i3: { decision: "allow_once" },
    });
    expect(lines.some((line) => line.includes("answer a, m, always or d"))).toBe(true);
    expect(lines.some((line) => line.includes("(Enter = a)"))).toBe(true);
  });

  test("end of input in a terminal denies: nothing runs unless someone said so", async () => {
    const input = new PassThrough();
    const pending = answerCards([card("i1", "first")], { interactive: true, input, write: () => {} });
    input.end();
    expect(await pending).toEqual({ i1: { decision: "deny" } });
  });

  test("only permission cards count as cards, raised natively or as langchain HITL requests", () => {
    expect(isCardInterrupt(card("i1", "x"))).toBe(true);
    const hitl = {
      id: "i4",
      value: { actionRequests: [], reviewConfigs: [], sciencegate: card("i4", "y").value },
    };
    expect(isCardInterrupt(hitl)).toBe(true);
    expect(isCardInterrupt({ id: "i5", value: { actionRequests: [], reviewConfigs: [] } })).toBe(false);
    expect(isCardInterrupt({ id: "i2", value: { question: "continue?" } })).toBe(false);
    expect(isCardInterrupt({ value: card("i3", "x").value })).toBe(false);
  });
});
