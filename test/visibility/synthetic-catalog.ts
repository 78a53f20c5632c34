/**
 * Large synthetic catalogs for the deferred-section tests and the visibility benchmark: many
 * sources (SaaS, data and science services) of uneven size, each with tools named and described the
 * way real MCP servers do (`list_pull_requests`: "Lists pull requests of a repository, filtered by
 * state."), with schemas of a few described parameters. Deterministic for a given seed.
 */
import type {
  SourceKind,
  SourceManifest,
  ToolKind,
  ToolManifest,
} from "../../src/governance/manifests/manifest-schema.js";

/** Options of `syntheticManifests`. */
export interface SyntheticCatalogOptions {
  /** Total number of tools. */
  tools: number;
  /** PRNG seed. @default 1 */
  seed?: number;
  /** Fewest and most tools of one source (the last source takes what is left). @default [4, 48] */
  toolsPerSource?: readonly [number, number];
}

/** Deterministic PRNG (mulberry32), so every run builds the same catalog. */
export function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Domain {
  kind: SourceKind;
  services: string[];
  /** Things the service holds: [singular, plural]. */
  nouns: [string, string][];
  audience: string;
}

const DOMAINS: Domain[] = [
  {
    kind: "other",
    services: ["github", "gitlab", "bitbucket", "gitea", "sourcehut", "azure-repos"],
    nouns: [
      ["repository", "repositories"],
      ["issue", "issues"],
      ["pull request", "pull requests"],
      ["branch", "branches"],
      ["commit", "commits"],
      ["release", "releases"],
      ["workflow run", "workflow runs"],
      ["code review comment", "code review comments"],
      ["tag", "tags"],
      ["webhook", "webhooks"],
    ],
    audience: "software teams",
  },
  {
    kind: "other",
    services: ["jira", "linear", "asana", "trello", "clickup", "monday", "youtrack"],
    nouns: [
      ["ticket", "tickets"],
      ["project", "projects"],
      ["sprint", "sprints"],
      ["board", "boards"],
      ["epic", "epics"],
      ["comment", "comments"],
      ["attachment", "attachments"],
      ["label", "labels"],
      ["time entry", "time entries"],
    ],
    audience: "project managers",
  },
  {
    kind: "dataset",
    services: ["postgres", "mysql", "bigquery", "snowflake", "clickhouse", "duckdb", "redshift", "sqlite"],
    nouns: [
      ["table", "tables"],
      ["schema", "schemas"],
      ["query result", "query results"],
      ["view", "views"],
      ["index", "indexes"],
      ["column statistic", "column statistics"],
      ["saved query", "saved queries"],
      ["database role", "database roles"],
    ],
    audience: "analysts",
  },
  {
    kind: "other",
    services: ["stripe", "paypal", "adyen", "quickbooks", "xero", "chargebee", "braintree"],
    nouns: [
      ["invoice", "invoices"],
      ["customer", "customers"],
      ["payment", "payments"],
      ["refund", "refunds"],
      ["subscription", "subscriptions"],
      ["payout", "payouts"],
      ["tax rate", "tax rates"],
      ["dispute", "disputes"],
    ],
    audience: "finance teams",
  },
  {
    kind: "other",
    services: ["slack", "teams", "discord", "zulip", "mattermost", "gmail", "outlook"],
    nouns: [
      ["message", "messages"],
      ["channel", "channels"],
      ["thread", "threads"],
      ["user", "users"],
      ["reaction", "reactions"],
      ["file", "files"],
      ["reminder", "reminders"],
      ["draft", "drafts"],
    ],
    audience: "everyone in a workspace",
  },
  {
    kind: "other",
    services: ["aws-s3", "gcs", "azure-blob", "dropbox", "box", "google-drive", "onedrive"],
    nouns: [
      ["bucket", "buckets"],
      ["object", "objects"],
      ["folder", "folders"],
      ["shared link", "shared links"],
      ["file version", "file versions"],
      ["access policy", "access policies"],
    ],
    audience: "operations teams",
  },
  {
    kind: "genomics",
    services: ["ncbi-gene", "ensembl-rest", "ucsc-genome", "gnomad", "gtex", "encode", "refseq"],
    nouns: [
      ["gene", "genes"],
      ["transcript", "transcripts"],
      ["variant", "variants"],
      ["expression profile", "expression profiles"],
      ["regulatory region", "regulatory regions"],
      ["sequence", "sequences"],
      ["assembly", "assemblies"],
      ["ortholog", "orthologs"],
    ],
    audience: "geneticists",
  },
  {
    kind: "chemistry",
    services: ["pubchem", "chebi", "drugbank", "zinc", "surechembl", "bindingdb"],
    nouns: [
      ["compound", "compounds"],
      ["bioassay", "bioassays"],
      ["target", "targets"],
      ["substructure match", "substructure matches"],
      ["patent", "patents"],
      ["binding affinity", "binding affinities"],
      ["spectrum", "spectra"],
    ],
    audience: "medicinal chemists",
  },
  {
    kind: "literature",
    services: ["crossref", "openalex", "semantic-scholar", "dblp", "core", "doaj", "zotero"],
    nouns: [
      ["paper", "papers"],
      ["author", "authors"],
      ["citation", "citations"],
      ["venue", "venues"],
      ["funder", "funders"],
      ["collection", "collections"],
      ["abstract", "abstracts"],
    ],
    audience: "researchers",
  },
  {
    kind: "other",
    services: ["datadog", "grafana", "sentry", "pagerduty", "prometheus", "new-relic", "opsgenie"],
    nouns: [
      ["alert", "alerts"],
      ["dashboard", "dashboards"],
      ["incident", "incidents"],
      ["metric series", "metric series"],
      ["log line", "log lines"],
      ["monitor", "monitors"],
      ["on-call schedule", "on-call schedules"],
      ["trace", "traces"],
    ],
    audience: "site reliability engineers",
  },
  {
    kind: "other",
    services: ["salesforce", "hubspot", "zendesk", "intercom", "freshdesk", "pipedrive"],
    nouns: [
      ["contact", "contacts"],
      ["deal", "deals"],
      ["lead", "leads"],
      ["support case", "support cases"],
      ["account", "accounts"],
      ["note", "notes"],
      ["campaign", "campaigns"],
    ],
    audience: "sales and support teams",
  },
];

const VARIANTS = ["", "-eu", "-us", "-admin", "-sandbox", "-internal", "-archive", "-v2", "-staging", "-lab"];
const VERBS: { id: string; text: string; kind: ToolKind; plural: boolean }[] = [
  { id: "list", text: "Lists", kind: "search", plural: true },
  { id: "search", text: "Searches", kind: "search", plural: true },
  { id: "get", text: "Gets one", kind: "lookup", plural: false },
  { id: "create", text: "Creates a", kind: "analysis", plural: false },
  { id: "update", text: "Updates a", kind: "analysis", plural: false },
  { id: "delete", text: "Deletes a", kind: "analysis", plural: false },
  { id: "export", text: "Exports", kind: "artifact-plan", plural: true },
  { id: "count", text: "Counts", kind: "analysis", plural: true },
  { id: "archive", text: "Archives a", kind: "analysis", plural: false },
  { id: "summarize", text: "Summarizes", kind: "analysis", plural: true },
];
const QUALIFIERS = [
  "by id",
  "filtered by status, owner and date range",
  "with cursor pagination (newest first)",
  "for the current user",
  "matching a free-text query",
  "in a given workspace or project",
  "including their metadata and links",
  "changed since a timestamp",
];
const PARAMS: [string, string][] = [
  ["query", "Free-text query; supports quoted phrases and field:value filters."],
  ["id", "Identifier of the item, as returned by the list tools."],
  ["project", "Project, workspace or repository the item belongs to."],
  ["status", "Only items in this state (open, closed, archived)."],
  ["since", "ISO 8601 timestamp; only items changed after it."],
  ["cursor", "Opaque cursor from the previous page."],
  ["limit", "Maximum number of items to return (1-100, default 25)."],
  ["fields", "Comma-separated fields to include in each item."],
  ["sort", "Sort order: relevance, created or updated."],
  ["format", "Output format: json, csv or markdown."],
];

/**
 * Source manifests holding `options.tools` tools in total, shaped like loaded manifests.
 * @param options total tools, seed and source size range
 * @returns the manifests (ids unique, tool ids unique within a source)
 */
export function syntheticManifests(options: SyntheticCatalogOptions): SourceManifest[] {
  const rand = random(options.seed ?? 1);
  const [min, max] = options.toolsPerSource ?? [4, 48];
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;
  const manifests: SourceManifest[] = [];
  const used = new Set<string>();
  let left = options.tools;
  for (let s = 0; left > 0; s++) {
    const domain = DOMAINS[s % DOMAINS.length] as Domain;
    const service = domain.services[Math.floor(s / DOMAINS.length) % domain.services.length] as string;
    const round = Math.floor(s / (DOMAINS.length * domain.services.length));
    const variant = VARIANTS[round % VARIANTS.length] ?? "";
    let id = `${service}${variant}${round >= VARIANTS.length ? `-${round}` : ""}`;
    while (used.has(id)) id = `${id}-x`;
    used.add(id);
    const size = Math.min(left, min + Math.floor(rand() * (max - min + 1)));
    left -= size;
    const toolIds = new Set<string>();
    const tools: ToolManifest[] = [];
    for (let i = 0; tools.length < size; i++) {
      const verb = VERBS[i % VERBS.length] as (typeof VERBS)[number];
      const [one, many] = domain.nouns[Math.floor(i / VERBS.length) % domain.nouns.length] as [
        string,
        string,
      ];
      const noun = verb.plural ? many : one;
      const lap = Math.floor(i / (VERBS.length * domain.nouns.length));
      const toolId = `${verb.id}_${noun.replace(/[ -]/g, "_")}${lap > 0 ? `_${lap + 1}` : ""}`;
      if (toolIds.has(toolId)) continue;
      toolIds.add(toolId);
      tools.push(syntheticTool(id, toolId, `${verb.text} ${noun}`, verb.kind, pick, rand));
    }
    manifests.push(syntheticSource(id, service, domain, tools, variant));
  }
  return manifests;
}

function syntheticTool(
  sourceId: string,
  toolId: string,
  action: string,
  kind: ToolKind,
  pick: <T>(list: readonly T[]) => T,
  rand: () => number,
): ToolManifest {
  const params = PARAMS.filter(() => rand() < 0.4);
  const chosen = params.length > 0 ? params : [PARAMS[0] as [string, string]];
  const properties = Object.fromEntries(
    chosen.map(([name, text]) => [name, { type: "string", description: text }]),
  );
  const qualifier = pick(QUALIFIERS);
  return {
    id: toolId,
    description:
      `${action} ${qualifier}. Returns a JSON list with each item's id, title and URL; ` +
      `use the returned ids with the get and update tools. Requires read access to the ${sourceId} account.`,
    kind,
    mcpToolName: toolId,
    inputSchema: { type: "object", properties, required: [chosen[0]?.[0] ?? "query"] },
    readOnly: kind !== "analysis",
    permission: { action: `${sourceId}:${toolId}`, resourceTemplate: sourceId, summaryTemplate: "run" },
    retryPolicy: {},
    timeoutMs: 30_000,
    routing: { keywords: [], mode: "off", priority: 50 },
    promptFragment: `Prefer ${toolId} when the user asks to ${action.toLowerCase()}.`,
  };
}

function syntheticSource(
  id: string,
  service: string,
  domain: Domain,
  tools: ToolManifest[],
  variant: string,
): SourceManifest {
  const nouns = domain.nouns.slice(0, 3).map(([, many]) => many);
  const where = variant === "" ? "" : ` (${variant.slice(1)} instance)`;
  const summary = `${capitalize(`${nouns.slice(0, -1).join(", ")} and ${nouns.at(-1)}`)} for ${domain.audience}${where}.`;
  return {
    id,
    displayName: capitalize(service),
    description: summary,
    publisher: service,
    version: "1",
    kind: domain.kind,
    enabledByDefault: true,
    transport: { mcpServerId: id },
    cache: { enabled: true, ttlSeconds: 60 },
    prompt: {
      summary,
      citationPolicy: `Cite ${capitalize(service)} and the id of each item.`,
      caveats: ["Results reflect the account's permissions at the time of the call."],
    },
    governance: {
      attribution: capitalize(service),
      license: "proprietary",
      termsUrl: "https://example.org/terms",
      dataClassification: "public",
      networkHosts: ["example.org"],
      maxResponseBytes: 1_000_000,
      rateLimitGroup: id,
    },
    tools,
  };
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
