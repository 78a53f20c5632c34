import { type ProviderKind, qualifiedToolName } from "../../adk/index.js";
import { modelVisibleName } from "../../visibility/index.js";
import type { CliIo, ExitCode } from "../io.js";
import type { CliRuntime } from "../runtime.js";
import { terminalLine } from "../terminal-text.js";

/**
 * What `sciencegate tools --json` prints: the whole catalog in one object. Scripts parse it, so a field is
 * added rather than renamed or removed.
 */
export interface ToolsReport {
  config: string;
  /** Each tool provider (MCP server): `kind` is the science.toml kind, or `extensions_config`. */
  servers: {
    id: string;
    /** The science.toml provider kind; absent for `extensions_config.json` servers. */
    kind?: ProviderKind;
    transport: string;
    status: string;
    reason?: string;
    stderrTail?: string[];
  }[];
  sources: {
    id: string;
    status: string;
    reason?: string;
    derived: boolean;
    availableTools: string[];
    missingTools: { toolId: string; mcpToolName: string; reason: string }[];
  }[];
  tools: {
    name: string;
    /** `provider.tool`, accepted by `callTool` and `sciencegate call`. */
    qualifiedName: string;
    /** The provider (server) id. */
    provider: string;
    providerKind: ProviderKind;
    sourceId: string;
    toolId: string;
    description: string;
    readOnly: boolean;
  }[];
  warnings: string[];
}

/**
 * Builds the catalog report: every server, every source and every callable tool.
 * @param runtime an open CLI runtime
 */
export async function buildToolsReport(runtime: CliRuntime): Promise<ToolsReport> {
  // createGovernance listed every server once already.
  const snapshot = runtime.catalog.snapshot() ?? (await runtime.catalog.refresh());
  const kinds = new Map<string, ProviderKind>((runtime.science?.providers ?? []).map((p) => [p.id, p.kind]));
  const kindOf = (id: string): ProviderKind => kinds.get(id) ?? "extensions_config";
  const servers = runtime.pool.serverIds().map((id) => {
    const state = runtime.pool.state(id);
    return {
      id,
      ...(kinds.has(id) ? { kind: kindOf(id) } : {}),
      transport: kinds.get(id) === "local" ? "in-process" : state.transport,
      status: state.status,
      ...(state.reason !== undefined ? { reason: state.reason } : {}),
      ...(state.status === "failed" && state.stderrTail?.length ? { stderrTail: state.stderrTail } : {}),
    };
  });
  return {
    config: runtime.configSource,
    servers,
    sources: snapshot.sources.map((s) => ({
      id: s.id,
      status: s.status,
      ...(s.reason !== undefined ? { reason: s.reason } : {}),
      derived: s.derived,
      availableTools: s.availableTools,
      missingTools: s.missingTools,
    })),
    tools: snapshot.tools.map((t) => ({
      name: modelVisibleName(t.sourceId, t.toolId),
      qualifiedName: qualifiedToolName(
        t,
        snapshot.sources.find((s) => s.id === t.sourceId)?.derived ?? false,
      ),
      provider: t.serverId,
      providerKind: kindOf(t.serverId),
      sourceId: t.sourceId,
      toolId: t.toolId,
      description: t.manifest.description,
      readOnly: t.manifest.readOnly,
    })),
    warnings: [...runtime.registry.warnings, ...snapshot.warnings],
  };
}

/**
 * `sciencegate tools`: prints the live catalog. Unreachable servers are warnings, not failures.
 * @returns 0
 */
export async function toolsCommand(
  runtime: CliRuntime,
  io: CliIo,
  options: { json: boolean },
): Promise<ExitCode> {
  // A server that did not start was already a warning on stderr when the runtime opened (openRuntime).
  const report = await buildToolsReport(runtime);
  if (options.json) {
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  // Server ids, reasons, stderr lines, tool names and descriptions are the servers' own text: each
  // field is printed inert (terminalLine), so none can drive the terminal or forge a line.
  io.stdout(terminalLine`config: ${report.config}\n\nServers\n`);
  for (const s of report.servers) {
    io.stdout(
      terminalLine`  ${s.id.padEnd(24)} ${(s.kind ?? "extensions_config").padEnd(17)} ${s.transport.padEnd(10)} ${s.status}${s.reason ? `: ${s.reason}` : ""}\n`,
    );
    for (const line of s.stderrTail ?? []) io.stdout(terminalLine`      stderr| ${line}\n`);
  }
  io.stdout("\nSources\n");
  for (const s of report.sources) {
    const total = s.availableTools.length + s.missingTools.length;
    io.stdout(
      terminalLine`  ${s.id.padEnd(24)} ${s.status.padEnd(11)} ${s.availableTools.length}/${total} tools${s.derived ? " (no manifest: derived, fail-closed)" : ""}${s.reason ? ` — ${s.reason}` : ""}\n`,
    );
    for (const m of s.missingTools) io.stdout(terminalLine`      missing ${m.toolId}: ${m.reason}\n`);
  }
  io.stdout("\nTools (qualified name, model-visible name, provider kind, access, description)\n");
  for (const t of report.tools) {
    const summary = t.description.split("\n")[0]?.slice(0, 70) ?? "";
    io.stdout(
      terminalLine`  ${t.qualifiedName.padEnd(32)} ${t.name.padEnd(44)} ${t.providerKind.padEnd(17)} ${t.readOnly ? "read-only" : "writes   "} ${summary}\n`,
    );
  }
  for (const w of report.warnings) io.stdout(terminalLine`\nwarning: ${w}`);
  if (report.warnings.length) io.stdout("\n");
  return 0;
}
