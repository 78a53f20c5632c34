/**
 * The zod schemas of source and tool manifests. A manifest is the contract between a
 * source's MCP server and the governance layer: what each tool accepts, who may call it, how it is
 * cached, rate-limited, cited and shown to the model.
 */
import { z } from "zod";
import { isTemplateFilter, TEMPLATE_FILTERS, templatePlaceholders } from "./template-placeholders.js";

/** Source ids become part of model-visible names, so they are kept to a small, stable alphabet. */
const SOURCE_ID = /^[a-z0-9][a-z0-9-]*$/;
const TOOL_ID = /^[a-z0-9][a-z0-9_-]*$/;
/** A bare host name (optionally `*.`-prefixed, optionally with a port): no scheme, path or user info. */
const HOST = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/;

const nonEmpty = z.string().trim().min(1, "must not be empty");
const nonNegativeInt = z.int().min(0);
const positiveInt = z.int().min(1);

/** What kind of data a source serves. */
export const sourceKindSchema = z.enum([
  "literature",
  "protein",
  "structure",
  "genomics",
  "variation",
  "pathway",
  "chemistry",
  "dataset",
  "knowledge-base",
  "other",
]);

/** What a tool does: `artifact-plan` tools return download candidates and never download. */
export const toolKindSchema = z.enum(["search", "lookup", "analysis", "artifact-plan"]);

/** Who may see a source's data: `private` and `controlled` sources are never cached and always ask. */
export const dataClassificationSchema = z.enum(["public", "private", "controlled"]);

/**
 * A JSON Schema for tool arguments. Only the shape the governance layer relies on is checked here
 * (an object schema with well-formed `properties` and `required`); ajv compiles the rest at call time.
 */
export const jsonSchemaObjectSchema = z.looseObject({
  type: z.literal("object", { error: 'must be "object" (tool arguments are a JSON object)' }),
  // Typed `object | boolean` (not a record) so that a live MCP tool's `inputSchema` fits the same type.
  properties: z
    .record(
      z.string(),
      z.custom<object | boolean>(
        (v) => typeof v === "boolean" || (typeof v === "object" && v !== null && !Array.isArray(v)),
        "must be a JSON Schema (an object or a boolean)",
      ),
    )
    .optional(),
  required: z.array(z.string()).optional(),
});

/** Keyword routing of a tool. */
export const routingSchema = z.strictObject({
  keywords: z.array(nonEmpty),
  mode: z.enum(["off", "prefer"]),
  priority: z.int().min(0).max(100),
});

/**
 * The permission request a call produces: templates are filled with the call's arguments
 * (`{name}`, or `{name|filter}` with a filter of `TEMPLATE_FILTERS`).
 */
export const permissionSchema = z.strictObject({
  action: nonEmpty,
  resourceTemplate: nonEmpty,
  summaryTemplate: nonEmpty,
  /**
   * What an `allow_matching` grant covers, e.g. `fs:write:dir:{path|dir}` (every write in that one
   * directory). Each placeholder must name an argument; a call whose scope cannot be filled (an
   * absent argument, a relative path) falls back to the default.
   * @default the first two `:` segments of the rendered resource
   */
  scopeTemplate: nonEmpty.optional(),
});

const TEMPLATE_FIELDS = ["resourceTemplate", "summaryTemplate", "scopeTemplate"] as const;
/** Values every template may use besides the arguments. */
const CONTEXT_VALUES = ["sourceId", "toolId"];

/**
 * Checks the templates of a tool's permission block: every filter is known, and a scope is built
 * from the tool's own arguments (a constant scope would be the tool-wide default under another name).
 */
function checkPermissionTemplates(tool: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const permission = tool.permission as Record<string, unknown> | undefined;
  if (typeof permission !== "object" || permission === null) return;
  for (const field of TEMPLATE_FIELDS) {
    const template = permission[field];
    if (typeof template !== "string") continue;
    const path = ["permission", field];
    for (const { name, filter } of templatePlaceholders(template)) {
      if (filter !== undefined && !isTemplateFilter(filter)) {
        ctx.addIssue({
          code: "custom",
          path,
          message: `unknown filter "|${filter}" in {${name}|${filter}}; use one of ${TEMPLATE_FILTERS.join(", ")}, or {${name}} for the value as is`,
        });
      }
    }
  }
  const scope = permission.scopeTemplate;
  if (typeof scope !== "string") return;
  const placeholders = templatePlaceholders(scope);
  if (placeholders.length === 0) {
    ctx.addIssue({
      code: "custom",
      path: ["permission", "scopeTemplate"],
      message:
        "has no {placeholder}, so it is the same for every call; name an argument (e.g. {path|dir}) or omit scopeTemplate for the tool-wide default",
    });
  }
  const schema = tool.inputSchema as { properties?: Record<string, unknown> } | undefined;
  const known = Object.keys(schema?.properties ?? {});
  for (const { name } of placeholders) {
    if (known.includes(name) || CONTEXT_VALUES.includes(name)) continue;
    ctx.addIssue({
      code: "custom",
      path: ["permission", "scopeTemplate"],
      message: `{${name}} is not an argument of the tool; use one of ${[...known, ...CONTEXT_VALUES].join(", ")} (inputSchema.properties)`,
    });
  }
}

/** Per-tool overrides of the source's cache settings. */
export const cachePolicySchema = z.strictObject({
  enabled: z.boolean().optional(),
  ttlSeconds: nonNegativeInt.optional(),
});

/** Retry settings of a tool; omitted fields take the broker's defaults. */
export const retryPolicySchema = z.strictObject({
  maxAttempts: positiveInt.optional(),
  initialDelayMs: nonNegativeInt.optional(),
  multiplier: z.number().min(1).optional(),
  maxDelayMs: nonNegativeInt.optional(),
  jitter: z.number().min(0).max(1).optional(),
});

/** One tool of a source and the MCP tool it maps to. */
export const toolManifestSchema = z
  .strictObject({
    id: z.string().regex(TOOL_ID, "must match [a-z0-9][a-z0-9_-]* (lowercase letters, digits, _ and -)"),
    description: nonEmpty,
    kind: toolKindSchema,
    mcpToolName: nonEmpty,
    inputSchema: jsonSchemaObjectSchema,
    readOnly: z.boolean(),
    permission: permissionSchema,
    cachePolicy: cachePolicySchema.optional(),
    /** Omitted means `{}`: every retry setting takes the broker default. */
    retryPolicy: retryPolicySchema.default({}),
    timeoutMs: positiveInt,
    routing: routingSchema,
    promptFragment: z.string(),
  })
  .superRefine((tool, ctx) => checkPermissionTemplates(tool, ctx), {
    // Runs on partially invalid input too, so every issue of a file is reported at once.
    when: (payload) => typeof payload.value === "object" && payload.value !== null,
  });

/** Legal terms, network allowlist and rate limits of a source. */
export const governanceSchema = z.strictObject({
  attribution: nonEmpty,
  license: nonEmpty,
  termsUrl: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
  dataClassification: dataClassificationSchema,
  networkHosts: z.array(z.string().regex(HOST, "must be a lowercase host name without scheme or path")),
  maxResponseBytes: positiveInt,
  rateLimitGroup: nonEmpty,
  maxConcurrentRequests: positiveInt.optional(),
  minIntervalMs: nonNegativeInt.optional(),
  rateLimitPerSecond: z.number().positive().optional(),
  maxQueueDepth: nonNegativeInt.optional(),
  queueTimeoutMs: nonNegativeInt.optional(),
});

/**
 * How the gateway forwards one part of a source server's surface beyond tools to its clients:
 * `denied` (not listed, every request refused and recorded), `allowed` (forwarded; each read, i.e. a
 * prompt got, a resource read, a completion, a subscription or a log level, is a ledger row with its
 * outcome), `audited` (as `allowed`, and the answer is kept in the content store, and list requests
 * are rows too), `approval` (as `audited`, and each read is first put to the client's human).
 */
export const surfacePolicySchema = z.enum(["denied", "allowed", "audited", "approval"]);

/**
 * The gateway's policy for a source server's prompts, resources (templates and subscriptions
 * included), completion and log level. Each omitted part is `allowed`: MCP reads have no side effect
 * and each one is still in the ledger.
 */
export const surfaceSchema = z.strictObject({
  prompts: surfacePolicySchema.optional(),
  resources: surfacePolicySchema.optional(),
  completion: surfacePolicySchema.optional(),
  logging: surfacePolicySchema.optional(),
});

/** A source: one data provider, served by one MCP server, with one or more tools. */
export const sourceManifestSchema = z
  .strictObject({
    /** Editors may point `$schema` at a JSON Schema of manifests; it is ignored. */
    $schema: z.string().optional(),
    manifestVersion: z.literal(1).optional(),
    id: z.string().regex(SOURCE_ID, "must match [a-z0-9][a-z0-9-]* (lowercase letters, digits and -)"),
    displayName: nonEmpty,
    description: nonEmpty,
    publisher: nonEmpty,
    version: nonEmpty,
    kind: sourceKindSchema,
    enabledByDefault: z.boolean(),
    transport: z.strictObject({ mcpServerId: nonEmpty }),
    cache: z.strictObject({ enabled: z.boolean(), ttlSeconds: nonNegativeInt }),
    prompt: z.strictObject({ summary: nonEmpty, citationPolicy: nonEmpty, caveats: z.array(nonEmpty) }),
    governance: governanceSchema,
    /** The gateway's policy for the server's prompts, resources, completion and log level. @default all `allowed` */
    surface: surfaceSchema.optional(),
    tools: z.array(toolManifestSchema).min(1, "a source needs at least one tool"),
  })
  .superRefine(
    (source, ctx) => {
      // Two tools with one id (or one MCP name) would make routing and permission grants ambiguous.
      // Runs on partially invalid input too (see `when`), so every issue of a file is reported at once.
      const tools: unknown[] = Array.isArray(source.tools) ? source.tools : [];
      for (const field of ["id", "mcpToolName"] as const) {
        const seen = new Map<string, number>();
        tools.forEach((tool, index) => {
          const value = (tool as Record<string, unknown> | null)?.[field];
          if (typeof value !== "string") return;
          const first = seen.get(value);
          if (first === undefined) {
            seen.set(value, index);
            return;
          }
          ctx.addIssue({
            code: "custom",
            path: ["tools", index, field],
            message: `duplicate ${field} "${value}" (also tools[${first}].${field})`,
          });
        });
      }
    },
    { when: (payload) => typeof payload.value === "object" && payload.value !== null },
  );

/** A validated source manifest. */
export type SourceManifest = z.output<typeof sourceManifestSchema>;
/** A source manifest as written in a file (`retryPolicy` may be omitted). */
export type SourceManifestInput = z.input<typeof sourceManifestSchema>;
/** A validated tool manifest. */
export type ToolManifest = z.output<typeof toolManifestSchema>;
/** A source's `surface` block. */
export type SourceSurface = z.output<typeof surfaceSchema>;
/** One part's policy in a source's `surface` block. */
export type SurfacePolicy = z.output<typeof surfacePolicySchema>;
/** A source's `governance` block. */
export type SourceGovernance = z.output<typeof governanceSchema>;
/** An object JSON Schema of tool arguments. */
export type JsonSchemaObject = z.output<typeof jsonSchemaObjectSchema>;
/** One of the source kinds. */
export type SourceKind = z.output<typeof sourceKindSchema>;
/** One of the tool kinds. */
export type ToolKind = z.output<typeof toolKindSchema>;
/** `public`, `private` or `controlled`. */
export type DataClassification = z.output<typeof dataClassificationSchema>;
/** A tool's keyword routing. */
export type ToolRouting = z.output<typeof routingSchema>;
