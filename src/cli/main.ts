#!/usr/bin/env node
/** The `sciencegate` command line. */
import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { isToolError } from "../adk/index.js";
import type { PdfExtractor } from "../artifacts/index.js";
import { isGovernanceError } from "../core/index.js";
import { auditCommand } from "./commands/audit.js";
import { authCommand } from "./commands/auth.js";
import { type CallIo, callCommand } from "./commands/call.js";
import { consoleCommand } from "./commands/console.js";
import { exportCommand } from "./commands/export.js";
import { extractCommand } from "./commands/extract.js";
import { APPROVAL_MODES, grantAddCommand, grantModeCommand, grantsCommand } from "./commands/grants.js";
import { jobsCommand } from "./commands/jobs.js";
import { searchToolsCommand } from "./commands/search-tools.js";
import { serveGatewayCommand } from "./commands/serve-gateway.js";
import { toolsCommand } from "./commands/tools.js";
import { verifyCommand } from "./commands/verify.js";
import { verifyCrateCommand } from "./commands/verify-crate.js";
import { type CliIo, type ExitCode, processIo } from "./io.js";
import { OAUTH_FLAG_OPTIONS, oauthFlagsOf } from "./oauth-flags.js";
import { type CliRuntime, openRuntime } from "./runtime.js";
import { APPROVE_CHOICES, parseApproveChoice } from "./terminal-approval.js";
import { terminalBlock, terminalIo } from "./terminal-text.js";
import { commandUsage, isCommandName, USAGE, wantsHelp } from "./usage.js";

/**
 * Runs the CLI.
 * @param argv arguments after the program name
 * @param given streams and environment (tests pass their own); everything written to them is guarded by `terminalIo`
 * @returns the exit code: 0 ok, 1 the operation failed, 2 usage or configuration error
 */
export async function main(argv: string[], given: CallIo = processIo()): Promise<ExitCode> {
  // No escape sequence from a server, a ledger row or an error reaches the terminal, whatever prints it.
  const io = terminalIo(given);
  const [command, ...rest] = argv;
  const [topic] = rest;
  if (command === "help" && topic !== undefined && isCommandName(topic)) {
    io.stdout(commandUsage(topic));
    return 0;
  }
  if (!command || command === "-h" || command === "--help" || command === "help") {
    io.stdout(USAGE);
    return command ? 0 : 2;
  }
  if (isCommandName(command) && wantsHelp(rest)) {
    io.stdout(commandUsage(command));
    return 0;
  }
  try {
    switch (command) {
      case "tools": {
        const { values } = parseArgs({
          args: rest,
          options: {
            config: { type: "string" },
            manifests: { type: "string", multiple: true },
            json: { type: "boolean", default: false },
          },
          strict: true,
        });
        return await withRuntime(io, values, (runtime) =>
          toolsCommand(runtime, io, { json: values.json ?? false }),
        );
      }
      case "call": {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: {
            config: { type: "string" },
            manifests: { type: "string", multiple: true },
            args: { type: "string", default: "{}" },
            session: { type: "string" },
            "enable-source": { type: "string", multiple: true },
            approve: { type: "string" },
            json: { type: "boolean", default: false },
          },
          strict: true,
        });
        const approve = values.approve === undefined ? undefined : parseApproveChoice(values.approve);
        if (values.approve !== undefined && approve !== values.approve) {
          io.stderr(`sciencegate call: --approve takes ${APPROVE_CHOICES.join(", ")}\n`);
          return 2;
        }
        const name = positionals[0];
        if (!name || positionals.length > 1) {
          io.stderr(
            `sciencegate call: name exactly one tool, e.g. sciencegate call mcp__pubmed__search --args '{"query":"brca1"}'\n`,
          );
          return 2;
        }
        return await withRuntime(io, values, (runtime) =>
          callCommand(runtime, io, {
            name,
            args: values.args ?? "{}",
            // Without --session, a session of its own: no earlier process's approvals cover this call.
            session: values.session?.trim() || `cli-${randomUUID()}`,
            json: values.json ?? false,
            enableSources: values["enable-source"] ?? [],
            ...(approve ? { approve } : {}),
          }),
        );
      }
      case "audit": {
        const { values } = parseArgs({
          args: rest,
          options: {
            config: { type: "string" },
            session: { type: "string" },
            limit: { type: "string", default: "50" },
            json: { type: "boolean", default: false },
            verify: { type: "boolean", default: false },
          },
          strict: true,
        });
        const limit = Number(values.limit);
        if (!Number.isInteger(limit) || limit < 1) {
          io.stderr("sciencegate audit: --limit takes a whole number >= 1\n");
          return 2;
        }
        return await withRuntime(io, values, (runtime) =>
          auditCommand(runtime, io, {
            json: values.json ?? false,
            verify: values.verify ?? false,
            limit,
            ...(values.session ? { session: values.session } : {}),
          }),
        );
      }
      case "search-tools": {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: {
            config: { type: "string" },
            manifests: { type: "string", multiple: true },
            "max-results": { type: "string", default: "5" },
            json: { type: "boolean", default: false },
          },
          strict: true,
        });
        const query = positionals.join(" ").trim();
        const maxResults = Number(values["max-results"]);
        if (query === "" || !Number.isInteger(maxResults) || maxResults < 1 || maxResults > 20) {
          io.stderr(
            `sciencegate search-tools: give a query and --max-results 1-20, e.g. sciencegate search-tools "protein structure" --max-results 10\n`,
          );
          return 2;
        }
        return await searchToolsCommand(io, {
          query,
          maxResults,
          json: values.json ?? false,
          ...(values.config ? { configPath: values.config } : {}),
          ...(values.manifests ? { manifestDirs: values.manifests } : {}),
        });
      }
      case "grants": {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: {
            session: { type: "string" },
            json: { type: "boolean", default: false },
            tool: { type: "string" },
            resource: { type: "string" },
            config: { type: "string" },
            manifests: { type: "string", multiple: true },
          },
          strict: true,
        });
        const [action = "list", id, ...extra] = positionals;
        const session = values.session?.trim() || undefined;
        const forAdd = [values.tool, values.resource, values.config, values.manifests].some(
          (v) => v !== undefined,
        );
        if (action === "add" && id === undefined && extra.length === 0 && session && values.tool) {
          const { tool, resource } = values;
          return await withRuntime(io, values, (runtime) =>
            grantAddCommand(runtime, io, { session, tool, resource, json: values.json ?? false }),
          );
        }
        const mode = APPROVAL_MODES.find((m) => m === id);
        if (action === "mode" && mode && extra.length === 0 && session && !forAdd) {
          return await grantModeCommand(io, { session, mode, json: values.json ?? false });
        }
        const valid = (action === "list" && id === undefined) || (action === "revoke" && id !== undefined);
        if (!valid || extra.length > 0 || forAdd) {
          io.stderr(
            "sciencegate grants: use 'grants list', 'grants revoke ID', " +
              "'grants add --session ID --tool NAME [--resource SCOPE] [--config FILE]' or " +
              `'grants mode --session ID ${APPROVAL_MODES.join("|")}' (see sciencegate --help)\n`,
          );
          return 2;
        }
        return await grantsCommand(io, {
          action,
          json: values.json ?? false,
          ...(id === undefined ? {} : { id }),
          ...(values.session ? { session: values.session } : {}),
        });
      }
      case "jobs": {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: { config: { type: "string" }, json: { type: "boolean", default: false } },
          strict: true,
        });
        const [action = "list", id, ...extra] = positionals;
        const valid =
          (action === "list" && id === undefined) ||
          ((action === "cancel" || action === "retry") && id !== undefined);
        if (!valid || extra.length > 0) {
          io.stderr("sciencegate jobs: use 'jobs list', 'jobs cancel ID' or 'jobs retry ID'\n");
          return 2;
        }
        return await jobsCommand(io, {
          action,
          json: values.json ?? false,
          ...(id === undefined ? {} : { id }),
          ...(values.config ? { configPath: values.config } : {}),
        });
      }
      case "verify": {
        const { values } = parseArgs({
          args: rest,
          options: {
            config: { type: "string" },
            workflow: { type: "string" },
            run: { type: "string" },
            json: { type: "boolean", default: false },
          },
          strict: true,
        });
        if (!values.workflow || !values.run) {
          io.stderr(
            "sciencegate verify: give --workflow FILE and --run RUN_ID, e.g. sciencegate verify --workflow workflow.json --run run-1\n",
          );
          return 2;
        }
        const { workflow, run } = values;
        return await withRuntime(io, values, (runtime) =>
          verifyCommand(runtime, io, { workflow, run, json: values.json ?? false }),
        );
      }
      case "extract": {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: {
            out: { type: "string" },
            extractor: { type: "string" },
            json: { type: "boolean", default: false },
          },
          strict: true,
        });
        const [pdf, ...extra] = positionals;
        if (!pdf || extra.length > 0) {
          io.stderr(
            "sciencegate extract: name exactly one PDF, e.g. sciencegate extract paper.pdf --out paper\n",
          );
          return 2;
        }
        return await extractCommand(io, {
          pdf,
          json: values.json ?? false,
          ...(values.out ? { out: values.out } : {}),
          // extractPdf names the accepted values when this one is not among them.
          ...(values.extractor ? { extractor: values.extractor as PdfExtractor } : {}),
        });
      }
      case "export": {
        const { values } = parseArgs({
          args: rest,
          options: {
            config: { type: "string" },
            manifests: { type: "string", multiple: true },
            session: { type: "string" },
            thread: { type: "string" },
            answer: { type: "string" },
            out: { type: "string" },
            json: { type: "boolean", default: false },
          },
          strict: true,
        });
        const { session, out } = values;
        if (!session?.trim() || !out) {
          io.stderr("sciencegate export: give --session ID and --out DIR or FILE.zip\n");
          return 2;
        }
        return await withRuntime(io, values, (runtime) =>
          exportCommand(runtime, io, {
            session,
            out,
            thread: values.thread,
            answer: values.answer,
            json: values.json ?? false,
          }),
        );
      }
      case "verify-crate": {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: { json: { type: "boolean", default: false } },
          strict: true,
        });
        const [path, ...extra] = positionals;
        if (!path || extra.length > 0) {
          io.stderr("sciencegate verify-crate: name one research object (a folder or a .zip)\n");
          return 2;
        }
        return await verifyCrateCommand(io, { path, json: values.json ?? false });
      }
      case "auth": {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: {
            config: { type: "string" },
            scope: { type: "string" },
            "timeout-s": { type: "string" },
            status: { type: "boolean", default: false },
            forget: { type: "boolean", default: false },
            json: { type: "boolean", default: false },
          },
          strict: true,
        });
        const [server, ...extra] = positionals;
        const timeout = values["timeout-s"] === undefined ? undefined : Number(values["timeout-s"]);
        const validTimeout = timeout === undefined || (Number.isInteger(timeout) && timeout > 0);
        if (
          extra.length > 0 ||
          (values.status ? server !== undefined : server === undefined) ||
          !validTimeout
        ) {
          io.stderr(
            "sciencegate auth: use 'auth <server> [--scope S]', 'auth --status' or 'auth <server> --forget'\n",
          );
          return 2;
        }
        return await authCommand(io, {
          server,
          status: values.status ?? false,
          forget: values.forget ?? false,
          configPath: values.config,
          scope: values.scope,
          timeoutSeconds: timeout,
          json: values.json ?? false,
        });
      }
      case "serve":
        return await serveCommand(rest, io);
      case "console": {
        const { values } = parseArgs({
          args: rest,
          options: {
            config: { type: "string" },
            manifests: { type: "string", multiple: true },
            host: { type: "string" },
            port: { type: "string" },
            writable: { type: "boolean", default: false },
            "allow-host": { type: "string", multiple: true },
            "public-url": { type: "string" },
            ...OAUTH_FLAG_OPTIONS,
          },
          strict: true,
        });
        return await consoleCommand(io, {
          publicUrl: values["public-url"],
          configPath: values.config,
          manifestDirs: values.manifests,
          host: values.host,
          port: values.port,
          writable: values.writable ?? false,
          allowHosts: values["allow-host"],
          oauth: oauthFlagsOf(values),
        });
      }
      default:
        io.stderr(`sciencegate: unknown command '${command}'.\n\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    return reportError(error, io, command);
  }
}

async function withRuntime(
  io: CliIo,
  values: { config?: string | undefined; manifests?: string[] | undefined },
  run: (runtime: CliRuntime) => Promise<ExitCode>,
): Promise<ExitCode> {
  const runtime = await openRuntime(io, {
    ...(values.config ? { configPath: values.config } : {}),
    ...(values.manifests ? { manifestDirs: values.manifests } : {}),
  });
  try {
    return await run(runtime);
  } finally {
    await runtime.close();
  }
}

async function serveCommand(args: string[], io: CliIo): Promise<ExitCode> {
  const [name, ...rest] = args;
  if (name === "gateway") {
    const { values } = parseArgs({
      args: rest,
      options: {
        config: { type: "string" },
        manifests: { type: "string", multiple: true },
        eager: { type: "boolean", default: false },
        "upstream-names": { type: "boolean", default: false },
        session: { type: "string" },
        http: { type: "string" },
        "allow-origin": { type: "string", multiple: true },
        "allow-host": { type: "string", multiple: true },
        "max-sessions": { type: "string" },
        "max-sessions-per-client": { type: "string" },
        "session-idle-ms": { type: "string" },
        "approval-wait-ms": { type: "string" },
        ...OAUTH_FLAG_OPTIONS,
      },
      strict: true,
    });
    const httpOnly =
      values["oauth-issuer"] ??
      values["allow-origin"] ??
      values["allow-host"] ??
      values["max-sessions"] ??
      values["max-sessions-per-client"] ??
      values["session-idle-ms"];
    if (values.http === undefined ? httpOnly !== undefined : values.session !== undefined) {
      io.stderr(
        values.http === undefined
          ? "sciencegate serve gateway: --oauth-issuer, --allow-origin, --allow-host, --max-sessions, --max-sessions-per-client and --session-idle-ms go with --http [HOST:]PORT.\n"
          : "sciencegate serve gateway: --session is for stdio; over --http each MCP session is its own governance session (gateway:<uuid>).\n",
      );
      return 2;
    }
    return await serveGatewayCommand(io, {
      configPath: values.config,
      manifestDirs: values.manifests,
      eager: values.eager ?? false,
      upstreamNames: values["upstream-names"] ?? false,
      session: values.session,
      http: values.http,
      allowOrigins: values["allow-origin"],
      allowHosts: values["allow-host"],
      maxSessions: values["max-sessions"],
      maxSessionsPerClient: values["max-sessions-per-client"],
      sessionIdleMs: values["session-idle-ms"],
      approvalWaitMs: values["approval-wait-ms"],
      oauth: oauthFlagsOf(values),
    });
  }
  const { values } = parseArgs({ args: rest, options: { only: { type: "string" } }, strict: true });
  if (name === "sources") {
    const { runSourcesServerStdio } = await import("../servers/index.js");
    const only = values.only
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    await runSourcesServerStdio({ env: io.env, ...(only ? { only } : {}) });
    // The stdio transport keeps the process alive until stdin closes.
    return await new Promise<ExitCode>(() => {});
  }
  if (name === "llm-wiki") {
    const { runLlmWikiServerStdio } = await import("../servers/index.js");
    await runLlmWikiServerStdio({ env: io.env });
    return await new Promise<ExitCode>(() => {});
  }
  io.stderr(`sciencegate serve: unknown server '${name ?? ""}'. Known: sources, llm-wiki, gateway.\n`);
  return 2;
}

function reportError(error: unknown, io: CliIo, command: string): ExitCode {
  if (isToolError(error)) {
    io.stderr(`${terminalBlock(String(error))}\n`);
    return 2;
  }
  if (isGovernanceError(error)) {
    // A message may list problems on lines of its own, and quote a server's text.
    io.stderr(`sciencegate: ${terminalBlock(`${error.code}: ${error.message}`)}\n`);
    return error.code === "INVALID_CONFIG" || error.code === "INVALID_MANIFEST" ? 2 : 1;
  }
  if (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS")) {
    io.stderr(`sciencegate: ${error.message}\n\n${isCommandName(command) ? commandUsage(command) : USAGE}`);
    return 2;
  }
  io.stderr(`sciencegate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 1;
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
