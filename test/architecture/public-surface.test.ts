/**
 * The public surface, pinned: every name each entry point of package.json exports (values and types).
 * A change here is a decision about what users may rely on; update the list in the same commit.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { expect, test } from "vitest";

const root = resolve(import.meta.dirname, "../..");

const PINNED: Record<string, string[]> = {
  ".": [
    "ApprovalHitlRequest",
    "ApprovalHitlResponse",
    "ApprovalHook",
    "Governance",
    "GovernanceError",
    "GovernanceErrorBody",
    "GovernanceErrorCode",
    "GovernanceExtension",
    "GovernanceMiddlewareOptions",
    "GovernanceOptions",
    "GovernedAgentOptions",
    "GovernedStateAnnotation",
    "GovernedToolNodeOptions",
    "McpRecord",
    "McpToolResult",
    "ModelNodeOptions",
    "PermissionCard",
    "PermissionDecision",
    "autoPromote",
    "createApprovalGate",
    "createGovernance",
    "createGovernedAgent",
    "createGovernedToolNode",
    "createGovernedToolsCondition",
    "createModelNode",
    "createPaperAcquisitionGraph",
    "deferredToolsPromptSection",
    "fromMultiServerMCPClient",
    "governanceForProcess",
    "governanceMiddleware",
    "governedToolsCondition",
    "isGovernanceError",
    "prepareFixedToolTable",
  ],
  "./adk": [
    "ToolError",
    "isToolError",
    "resolveToolName",
    "scienceExtension",
    "toolUseVerified",
    "withToolUseVerified",
  ],
  "./artifacts": [
    "ArtifactDownloadProgressEvent",
    "DownloadFetch",
    "DownloadJob",
    "DownloadJobStore",
    "DownloadLookup",
    "DownloadResult",
    "PaperExtractResult",
    "createArtifactDownloadTool",
    "createPaperExtractTool",
    "downloadArtifact",
    "extractPdf",
    "fullTextExtractions",
    "reviewAnswer",
    "reviewEvidence",
  ],
  "./console": ["checkpointerThreadAnswer", "createConsoleHandler", "serveConsole"],
  "./gateway": [
    "GatewayApprovalHook",
    "GatewayAuthenticator",
    "createElicitationApproval",
    "createGatewayServer",
    "createOAuthResourceServer",
    "serveGatewayHttp",
  ],
  "./governance": [
    "AuthorizationRecord",
    "Authorize",
    "Broker",
    "ContentStore",
    "FileContentStore",
    "GrantStore",
    "InvocationRecord",
    "InvokeRequest",
    "LedgerStore",
    "MemoryContentStore",
    "MemoryGrantStore",
    "MemoryLedger",
    "MemorySessionStateStore",
    "PostgresGrantStore",
    "PostgresLedger",
    "SessionStateStore",
    "SourceCatalog",
    "SourceManifest",
    "SqliteGrantStore",
    "SqliteLedger",
    "checkStoreIntegrity",
    "validateManifest",
  ],
  "./research-object": [
    "createReplayGovernance",
    "exportResearchObject",
    "openResearchObject",
    "researchObjectZip",
    "verifyResearchObject",
    "writeResearchObject",
  ],
  "./servers": [
    "LLM_WIKI_SERVER_ID",
    "SOURCES_SERVER_ID",
    "createLlmWikiServer",
    "createSourcesServer",
    "runLlmWikiServerStdio",
    "runSourcesServerStdio",
  ],
  "./testing": [
    "FakeProviderServer",
    "FakeRoute",
    "ManualClock",
    "ScriptedChatModel",
    "ScriptedReply",
    "createInMemoryPool",
    "createTestGovernance",
    "flushMicrotasks",
    "hasCalled",
    "lastToolResult",
    "providerEnvFor",
    "startFakeProviderServer",
    "startReferenceWikiServer",
    "toolResultBody",
  ],
  "./testing/conformance": [
    "describeContentStoreConformance",
    "describeDownloadJobStoreConformance",
    "describeGrantStoreConformance",
    "describeLedgerConformance",
    "describeSessionStateStoreConformance",
  ],
};

interface PackageJson {
  exports: Record<string, string | { types: string; import: string }>;
}

/** package.json's entry points and the src/ file each is built from. */
function entryPoints(): [string, string][] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageJson;
  return Object.entries(pkg.exports).flatMap(([subpath, target]) =>
    typeof target === "string"
      ? []
      : [[subpath, target.import.replace("./dist/", "src/").replace(/\.js$/, ".ts")]],
  );
}

test("each entry point exports exactly the pinned names", () => {
  const entries = entryPoints();
  const program = ts.createProgram(
    entries.map(([, file]) => join(root, file)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      noEmit: true,
      skipLibCheck: true,
    },
  );
  const checker = program.getTypeChecker();
  const actual: Record<string, string[]> = {};
  for (const [subpath, file] of entries) {
    const source = program.getSourceFile(join(root, file));
    const symbol = source && checker.getSymbolAtLocation(source);
    if (!symbol) throw new Error(`${file} (the entry of ${subpath}) is not a module`);
    actual[subpath] = checker
      .getExportsOfModule(symbol)
      .map((s) => s.name)
      .sort();
  }
  expect(actual).toEqual(PINNED);
  // The TypeScript program over every entry point takes 15–35 s on 2 busy cores.
}, 120_000);

test("the root entry stays a short list of entry points", () => {
  expect(PINNED["."]?.length).toBeLessThanOrEqual(40);
});

test("tsconfig.json maps sciencegate and each subpath to the same src/ entry as package.json", () => {
  const tsconfig = JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8")) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  const expected = Object.fromEntries(
    entryPoints().map(([subpath, file]) => [
      subpath === "." ? "sciencegate" : `sciencegate/${subpath.slice(2)}`,
      [`./${file}`],
    ]),
  );
  expect(tsconfig.compilerOptions.paths).toEqual(expected);
});
