/**
 * Every public function that takes the runtime takes it as `{ governance, … }`. A plain JavaScript
 * caller of the form before (the runtime as a positional argument) is told the new form with
 * `INVALID_CONFIG`, before anything runs.
 */

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createApprovalGate,
  createPaperAcquisitionGraph,
  governanceMiddleware,
  prepareFixedToolTable,
} from "sciencegate";
import { scienceExtension, toolUseVerified } from "sciencegate/adk";
import { downloadArtifact, fullTextExtractions, reviewAnswer, reviewEvidence } from "sciencegate/artifacts";
import { createConsoleHandler, serveConsole } from "sciencegate/console";
import { createElicitationApproval, createGatewayServer } from "sciencegate/gateway";
import { exportResearchObject } from "sciencegate/research-object";
import { describe, expect, test } from "vitest";

/** What an old caller passed first: a runtime, not an options object. */
const runtime = { broker: {}, catalog: {}, tools: () => [] };
// biome-ignore lint/suspicious/noExplicitAny: a plain JavaScript caller, on purpose
type Loose = (...args: any[]) => unknown;

const calls: Array<[string, Loose]> = [
  ["createGatewayServer", createGatewayServer as Loose],
  ["createElicitationApproval", createElicitationApproval as Loose],
  ["createConsoleHandler", createConsoleHandler as Loose],
  ["serveConsole", serveConsole as Loose],
  ["governanceMiddleware", governanceMiddleware as Loose],
  ["prepareFixedToolTable", prepareFixedToolTable as Loose],
  ["createApprovalGate", createApprovalGate as Loose],
  ["createPaperAcquisitionGraph", createPaperAcquisitionGraph as Loose],
  ["downloadArtifact", downloadArtifact as Loose],
  ["fullTextExtractions", fullTextExtractions as Loose],
  ["reviewAnswer", reviewAnswer as Loose],
  ["reviewEvidence", reviewEvidence as Loose],
  ["exportResearchObject", exportResearchObject as Loose],
  ["toolUseVerified", toolUseVerified as Loose],
];

describe("the runtime passed the old way", () => {
  test.each(calls)(
    "%s(governance, …) is refused with INVALID_CONFIG naming the new form",
    async (name, f) => {
      const outcome = await (async () => f(runtime, "second"))().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(outcome).toMatchObject({ code: "INVALID_CONFIG" });
      expect((outcome as Error).message).toContain(`${name}({ governance`);
    },
  );

  test("science.callTool(governance) is refused the same way", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sciencegate-governance-option-"));
    writeFileSync(join(dir, "science.toml"), '[project]\nname = "empty"\n');
    const science = await scienceExtension({ path: join(dir, "science.toml") });
    expect(() => (science.callTool as Loose)(runtime)).toThrow(/science\.callTool\(\{ governance/);
  });
});
