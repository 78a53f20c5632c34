/**
 * The help of the `sciencegate` command: one block per command, shown together by `sciencegate --help`
 * and alone by `sciencegate <command> --help`, so the overview and a command's own help never disagree.
 */

/** A command's help: the lines the overview shows, and what only its own help adds. */
interface CommandHelp {
  /** Synopsis lines, as aligned in the overview. */
  lines: string;
  /** Notes for `sciencegate <command> --help` only. */
  notes?: string;
  /** The shared options the command takes (explained in its own help). */
  shares: readonly ("config" | "json")[];
}

const CONFIG_NOTE = `  --config FILE   extensions_config.json or science.toml to use (else $SCIENCEGATE_CONFIG,
                  $SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH, ./extensions_config.json and
                  ./science.toml, else the built-in default)`;

const JSON_NOTE = "  --json          machine-readable output";

const COMMANDS = {
  tools: {
    shares: ["config", "json"],
    lines: `  tools [--config FILE] [--manifests DIR] [--json]   list servers, sources and model-visible tools`,
    notes: `A server that cannot start is a warning on stderr (naming the server and the reason) and a
'failed' line under Servers; the command still lists the rest.`,
  },
  call: {
    shares: ["config", "json"],
    lines: `  call <tool> [--args JSON] [--session ID] [--json]  one governed call; tool: provider.tool,
                                                     mcp__<source>__<tool> or a bare name only one provider has
       [--enable-source ID]...                       switch a source on for the session first (e.g. llm-wiki)
       [--approve once|matching|deny|always]         answer a dangerous call's approval card (else asked in a TTY)`,
    notes: `Sessions: without --session every call is a session of its own (cli-<random>), so an earlier
call's approvals never cover it. Name a session to share them: grants from --approve matching and the
always_allow mode of --approve always then apply to later calls with the same --session (grants are
kept in the data directory; list or revoke them with 'sciencegate grants').`,
  },
  audit: {
    shares: ["config", "json"],
    lines: `  audit [--session ID] [--limit N] [--json]          ledger rows and a summary
  audit --verify [--json]                            every ledger reference stored and intact (after a crash)`,
  },
  grants: {
    shares: ["config", "json"],
    lines: `  grants [list|revoke ID] [--session ID] [--json]    session permission grants; revoke one
  grants add --session ID --tool NAME                grant a session a tool's calls out of band, as Allow
       [--resource SCOPE] [--config FILE]            matching on its card would (SCOPE: the card's
       [--manifests DIR]...                          matchingScope.resource; default the whole tool)
  grants mode --session ID always_allow|ask_for_dangerous
                                                     set a session's approval mode (needs
                                                     SCIENCEGATE_DATABASE_URL: a running gateway follows it)`,
  },
  jobs: {
    shares: ["config", "json"],
    lines: `  jobs [list|cancel ID|retry ID] [--json]            download jobs; cancel one, or retry a failed one`,
  },
  verify: {
    shares: ["config", "json"],
    lines: `  verify --workflow FILE --run RUN_ID [--json]      tool_use_verified gate: every node that declared
                                                     tools made a successful call of one in the run`,
  },
  "search-tools": {
    shares: ["config", "json"],
    lines: `  search-tools "<query>" [--max-results N] [--config FILE] [--json]
                                                     rank tools as tool_search does (works offline)`,
  },
  extract: {
    shares: ["json"],
    lines: `  extract <pdf> [--out DIR] [--extractor auto|pdfjs|pdftotext] [--json]
                                                     bounded PDF text extraction (pdftotext when on the PATH,
                                                     else pdf.js in a worker) to DIR/fulltext.md +
                                                     manifest.json (default ./<name>-extracted)`,
    notes: `Needs no config and no MCP server. The bounds are the defaults of paper_extract_pdf (50 MiB,
200 pages, 20 M characters, 512 MiB of memory, 120 s).`,
  },
  export: {
    shares: ["config", "json"],
    lines: `  export --session ID [--thread ID] [--answer FILE] --out DIR|FILE.zip [--json]
                                                     the session's research object (RO-Crate): every
                                                     call, authorization, object, download and the
                                                     answer's claims with their review`,
  },
  "verify-crate": {
    shares: ["json"],
    lines: `  verify-crate PATH [--json]                         re-hash a research object, resolve its references,
                                                     re-run its claim review; exit 0 verified, 1 a
                                                     problem (each with what it breaks), 2 not a crate`,
  },
  serve: {
    shares: ["config"],
    lines: `  serve sources [--only id,id]                       run the bundled science-sources MCP server (stdio)
  serve llm-wiki                                     run the LLM Wiki bridge (stdio; $SCIENCE_AGENT_LLM_WIKI_URL)
  serve gateway [--config FILE] [--manifests DIR]... the governed MCP gateway (stdio): one MCP server in
       [--eager] [--session ID]                      front of every configured server and source, for
                                                     2025-11-25 and 2026-07-28 clients; --eager
                                                     lists every allowed tool up front
       [--upstream-names]                            tools keep their servers' own names where no
                                                     other tool has that name (else mcp__<src>__<tool>;
                                                     gateway_tool_names per server in the config)
       [--approval-wait-ms N]                        an unanswered approval question is denied after N ms
                                                     (default 10 minutes)
       [--http [HOST:]PORT] [--allow-origin ORIGIN]...
       [--allow-host NAME]...                        Streamable HTTP at http://HOST:PORT/mcp instead (HOST
                                                     127.0.0.1 unless given; any other bind needs a token
                                                     in $SCIENCEGATE_GATEWAY_TOKEN)
       [--max-sessions N] [--max-sessions-per-client N]
       [--session-idle-ms N]                         session limits over HTTP (100, 64, 30 minutes)
       [--oauth-issuer URL] [--oauth-audience URL]   over HTTP, accept the identity provider's access
       [--oauth-jwks-url URL]                        tokens instead of the token: JWTs of that issuer
       [--oauth-scopes call=S,approve=S,administer=S]
                                                     for that audience (default: the URL served); each
                                                     user's rows, grants and quotas are its own`,
    notes: `Replicas: give each the same SCIENCEGATE_DATABASE_URL (the 2026-07-28 conversations are kept
there too) and the same SCIENCEGATE_REQUEST_STATE_SECRET (at least 32 bytes), which signs the
approval round trips of 2026-07-28 clients so that any replica can resume them.`,
  },
  auth: {
    shares: ["config", "json"],
    lines: `  auth <server> [--scope S] [--config FILE] [--json] authorize a protected http/sse server (OAuth 2.1): prints
                                                     the page to open, waits for the browser on a loopback
                                                     callback, stores the tokens (client credentials: at once)
  auth --status [--json]                             which protected servers hold tokens (never shows one)
  auth <server> --forget                             remove a server's stored credentials`,
    notes: `Tokens are kept in <data>/oauth/<server>.json (the folder 0700, the file 0600) or, with
SCIENCEGATE_DATABASE_URL, in PostgreSQL; they never reach the ledger, a log line or this command's output.`,
  },
  console: {
    shares: ["config"],
    lines: `  console [--port N] [--host H] [--writable]         the Sciencegate console in the browser (default
       [--allow-host NAME]... [--config FILE]        http://127.0.0.1:4680): sources, invocations,
                                                     evidence, downloads, papers, permissions; read-only
                                                     unless --writable; a HOST other than loopback needs
                                                     a token in $SCIENCEGATE_CONSOLE_TOKEN, or
       [--oauth-issuer URL] [--oauth-audience URL]   access tokens of an identity provider with the
       [--oauth-jwks-url URL] [--oauth-scopes ...]   administer scope instead; --writable also
       [--public-url URL]                            authorizes protected MCP servers (Sources page),
                                                     sending the browser back to URL/oauth/callback`,
  },
} satisfies Record<string, CommandHelp>;

/** A command of the CLI. */
export type CommandName = keyof typeof COMMANDS;

/** `sciencegate --help`: every command. */
export const USAGE = `Usage: sciencegate <command> [options]

Commands:
${Object.values(COMMANDS)
  .map((help) => help.lines)
  .join("\n")}

Options:
${CONFIG_NOTE}
${JSON_NOTE}
  -h, --help      this help; after a command (sciencegate call --help), that command's help
`;

/**
 * @param name a command name as typed
 * @returns whether it names a command of the CLI
 */
export function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/**
 * `sciencegate <command> --help`: the command's lines, its notes and the options it shares.
 * @param name the command
 * @returns the help text
 */
export function commandUsage(name: CommandName): string {
  const help: CommandHelp = COMMANDS[name];
  const notes = help.notes ? `\n${help.notes}\n` : "";
  const options = [
    ...(help.shares.includes("config") ? [CONFIG_NOTE] : []),
    ...(help.shares.includes("json") ? [JSON_NOTE] : []),
    "  -h, --help      this help",
  ];
  return `Usage of sciencegate ${name}:\n\n${help.lines}\n${notes}\nOptions:\n${options.join("\n")}\n`;
}

/**
 * Whether the arguments after a command ask for its help (`-h` or `--help` before a `--`).
 * @param args the arguments after the command name
 * @returns true when the command's help is wanted
 */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === "--help" || arg === "-h");
}
