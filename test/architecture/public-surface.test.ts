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
    "ApprovalCardFormat",
    "ApprovalDecision",
    "ApprovalGateOptions",
    "ApprovalHitlRequest",
    "ApprovalHitlResponse",
    "ApprovalHook",
    "ApprovalInterruptValue",
    "ApprovalRequest",
    "FromMultiServerClientOptions",
    "GOVERNANCE_ERROR_CODES",
    "Governance",
    "GovernanceError",
    "GovernanceErrorBody",
    "GovernanceErrorCode",
    "GovernanceMiddlewareOptions",
    "GovernanceOptions",
    "GovernedAgentOptions",
    "GovernedAgentRuntime",
    "GovernedState",
    "GovernedStateAnnotation",
    "GovernedStateUpdate",
    "GovernedToolNodeOptions",
    "GovernedToolTask",
    "ModelNodeOptions",
    "PermissionCard",
    "PermissionDecision",
    "SessionIdResolver",
    "ToolError",
    "createApprovalGate",
    "createGovernance",
    "createGovernedAgent",
    "createGovernedToolNode",
    "createGovernedToolsCondition",
    "createModelNode",
    "fromMultiServerMCPClient",
    "governanceMiddleware",
    "governedToolsCondition",
    "isGovernanceError",
    "isToolError",
    "prepareFixedToolTable",
  ],
  "./adk": [
    "CallTool",
    "CallToolContext",
    "CallToolOutcome",
    "LocalTool",
    "ProviderKind",
    "ScienceProject",
    "ScienceProvider",
    "ToolDeclaration",
    "ToolUseFailure",
    "ToolUseVerdict",
    "ToolUseVerifiedOptions",
    "loadLocalTools",
    "loadScienceToml",
    "loadWorkflowDeclarations",
    "parseScienceToml",
    "qualifiedToolName",
    "resolveToolName",
    "toolUseVerified",
    "withToolUseVerified",
  ],
  "./artifacts": [
    "AcquiredPaper",
    "AcquiredPaperStatus",
    "ArtifactDownloadProgressEvent",
    "ArtifactDownloadToolOptions",
    "Claim",
    "DEFAULT_DOWNLOAD_MAX_BYTES",
    "DEFAULT_PDF_LIMITS",
    "DownloadApproval",
    "DownloadAuthorize",
    "DownloadFetch",
    "DownloadJob",
    "DownloadJobError",
    "DownloadJobStatus",
    "DownloadJobStore",
    "DownloadLookup",
    "DownloadManager",
    "DownloadManagerOptions",
    "DownloadNetworkOptions",
    "DownloadPlan",
    "DownloadProgress",
    "DownloadRequest",
    "DownloadResult",
    "Evidence",
    "EvidenceRejection",
    "EvidenceReview",
    "EvidenceRuntime",
    "ExtractPdfInput",
    "ExtractPdfOptions",
    "ExtractPdfResult",
    "FullTextExtraction",
    "ManifestLookup",
    "MemoryDownloadJobStore",
    "PAPER_EXTRACT_TOOL_ID",
    "PaperAcquisitionCandidate",
    "PaperAcquisitionGraph",
    "PaperAcquisitionGraphOptions",
    "PaperAcquisitionRuntime",
    "PaperExtractResult",
    "PaperExtractToolOptions",
    "PaperExtractionRequest",
    "PaperExtractionRuntime",
    "PdfLimits",
    "PdfManifest",
    "PdfManifestPage",
    "PrivateAddressAllowance",
    "ResolvedAddress",
    "ReviewEvidenceOptions",
    "ReviewedClaim",
    "ReviewedEvidence",
    "ReviewedRecord",
    "SqliteDownloadJobStore",
    "TurnToolCallIds",
    "createArtifactDownloadTool",
    "createPaperAcquisitionGraph",
    "createPaperExtractTool",
    "downloadAuthorizationRequest",
    "extractDownloadedPaper",
    "extractPdf",
    "fullTextExtractions",
    "reviewEvidence",
  ],
  "./governance": [
    "ApprovalAction",
    "ApprovalCall",
    "ApprovalGateRuntime",
    "ApprovalMode",
    "ArtifactCandidate",
    "AuthorizationApproval",
    "AuthorizationDecision",
    "AuthorizationRecord",
    "AuthorizationRequest",
    "Authorize",
    "BUNDLED_SOURCES_SERVER_ID",
    "Broker",
    "BrokerOptions",
    "CatalogSnapshot",
    "CatalogSource",
    "CatalogTool",
    "Citation",
    "Clock",
    "ContentRef",
    "ContentScope",
    "ContentStore",
    "CrossReference",
    "DecideResult",
    "ExtensionsConfig",
    "FileContentStore",
    "GovernedStructuredTool",
    "GovernedStructuredToolFields",
    "GovernedToolRunner",
    "Grant",
    "GrantStore",
    "HitlDecision",
    "InvocationRecord",
    "InvokeOutcome",
    "InvokeRequest",
    "IsDangerous",
    "Ledger",
    "LedgerQuery",
    "LedgerSummary",
    "McpRecord",
    "McpToolResult",
    "MemoryContentStore",
    "MemoryGrantStore",
    "MemoryLedger",
    "MultiServerClientLike",
    "PendingEndSource",
    "PendingPermission",
    "PermissionCard",
    "PermissionDecision",
    "PermissionDecisionSource",
    "PermissionEvaluation",
    "PermissionPolicy",
    "PermissionRisk",
    "PermissionService",
    "PermissionServiceOptions",
    "PoolCallOptions",
    "RateLimitGroupConfig",
    "RateLimiter",
    "ResultCache",
    "RoutingConfig",
    "ServerConfig",
    "ServerPool",
    "ServerPoolOptions",
    "ServerState",
    "ServerStatus",
    "SessionSettings",
    "SourceCatalog",
    "SourceManifest",
    "SourceRegistry",
    "SourceStatus",
    "SqliteGrantStore",
    "SqliteLedger",
    "StoreIntegrityReport",
    "ToolManifest",
    "ToolServerPool",
    "TransportKind",
    "UpstreamError",
    "UpstreamErrorCode",
    "approvalResponseJsonSchema",
    "autoPromote",
    "builtinManifestDir",
    "checkStoreIntegrity",
    "createAuthorizationApproval",
    "createAuthorizationRequest",
    "createDownloadApproval",
    "createMultiServerClientPool",
    "defaultExtensionsConfigJson",
    "deferredToolsPromptSection",
    "grantStorePath",
    "inputSchemasCompatible",
    "loadExtensionsConfig",
    "loadManifestDir",
    "loadManifestFile",
    "modelVisibleName",
    "parseExtensionsConfig",
    "permissionDecisionJsonSchema",
    "permissionDecisionSchema",
    "resolveConfigPath",
    "resolveDataDir",
    "systemClock",
    "toErrorBody",
    "toolErrorResult",
    "validateExtensionsConfig",
    "validateManifest",
  ],
  "./servers": [
    "LLM_WIKI_SERVER_ID",
    "LlmWikiServerOptions",
    "SOURCES_SERVER_ID",
    "createLlmWikiServer",
    "createSourcesServer",
    "parseWikiOrigin",
    "runLlmWikiServerStdio",
    "runSourcesServerStdio",
    "wikiPageUrl",
  ],
  "./testing": [
    "DownloadJobStoreConformanceOptions",
    "FakeProviderServer",
    "FakeProviderServerOptions",
    "FakeRoute",
    "InMemoryPoolOptions",
    "ManualClock",
    "ReferenceWiki",
    "ReferenceWikiOptions",
    "createInMemoryPool",
    "describeContentStoreConformance",
    "describeDownloadJobStoreConformance",
    "describeGrantStoreConformance",
    "describeLedgerConformance",
    "flushMicrotasks",
    "providerEnvFor",
    "startFakeProviderServer",
    "startReferenceWikiServer",
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
