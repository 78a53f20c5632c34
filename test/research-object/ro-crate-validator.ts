/**
 * An RO-Crate 1.1 metadata validator for tests, written from the specification's rules and the
 * published 1.1 JSON-LD context (the fixture `ro-crate-1.1-context.json`, CC0): the descriptor and the
 * root dataset are there with their required properties; the graph is flat; every entity has an `@id`
 * (used once) and an `@type`; every type and property is a term of the context (1.1's, or the crate's
 * own added context) or an absolute IRI; every reference names an entity of the crate or is an
 * absolute URL; every data entity (`File`) is a file of the crate listed in the root's `hasPart`, and
 * every file of the crate is described.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const CONTEXT_URL = "https://w3id.org/ro/crate/1.1/context";
const SPEC_URL = "https://w3id.org/ro/crate/1.1";
const context = JSON.parse(
  readFileSync(join(import.meta.dirname, "fixtures/ro-crate-1.1-context.json"), "utf8"),
)["@context"] as Record<string, string>;
const ABSOLUTE_IRI = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** One rule the metadata breaks. */
export interface CrateIssue {
  entity: string;
  rule: string;
  detail: string;
}

/**
 * Validates a crate's metadata against RO-Crate 1.1.
 * @param metadata the parsed `ro-crate-metadata.json`
 * @param files the paths of the crate's files (metadata and preview included)
 * @returns every issue; empty when the crate is valid
 */
export function validateRoCrate(metadata: unknown, files: readonly string[]): CrateIssue[] {
  const issues: CrateIssue[] = [];
  const issue = (entity: string, rule: string, detail: string) => issues.push({ entity, rule, detail });
  const doc = metadata as { "@context"?: unknown; "@graph"?: unknown };
  const terms = termsOf(doc["@context"], issue);
  if (!Array.isArray(doc["@graph"])) {
    issue("(document)", "graph", "@graph must be an array of entities");
    return issues;
  }
  const graph = doc["@graph"] as Record<string, unknown>[];
  const ids = new Set<string>();
  for (const entity of graph) {
    const id = entity?.["@id"];
    if (typeof id !== "string" || id === "") {
      issue(JSON.stringify(entity).slice(0, 60), "id", "every entity needs an @id");
      continue;
    }
    if (ids.has(id)) issue(id, "unique-id", "the @id is used by two entities");
    ids.add(id);
  }
  const resolves = (name: string) => terms.has(name) || isCompactIri(name, terms) || ABSOLUTE_IRI.test(name);
  for (const entity of graph) {
    const id = String(entity["@id"]);
    const types = [entity["@type"]].flat();
    if (types.length === 0 || types.some((t) => typeof t !== "string" || t === "")) {
      issue(id, "typed", "every entity needs an @type (a term or a list of terms)");
    }
    for (const type of types)
      if (typeof type === "string" && !resolves(type))
        issue(id, "type-term", `@type ${type} is not in the context`);
    for (const [key, value] of Object.entries(entity)) {
      if (key === "@id" || key === "@type") continue;
      if (key.startsWith("@")) issue(id, "keyword", `${key} does not belong in a flattened entity`);
      else if (!resolves(key)) issue(id, "property-term", `property ${key} is not in the context`);
      for (const item of [value].flat()) {
        if (item === null || typeof item !== "object") continue;
        const keys = Object.keys(item);
        const target = (item as { "@id"?: unknown })["@id"];
        if (keys.length !== 1 || typeof target !== "string") {
          issue(
            id,
            "flattened",
            `${key} holds a nested object; entities must reference each other by {"@id"}`,
          );
        } else if (!ids.has(target) && !ABSOLUTE_IRI.test(target)) {
          issue(
            id,
            "reference",
            `${key} names ${target}, neither an entity of the crate nor an absolute URL`,
          );
        }
      }
    }
  }
  const byId = new Map(graph.map((e) => [String(e["@id"]), e]));
  const descriptor = byId.get("ro-crate-metadata.json");
  if (!descriptor) issue("ro-crate-metadata.json", "descriptor", "the metadata descriptor is missing");
  else {
    if (refOf(descriptor.about) !== "./") issue("ro-crate-metadata.json", "descriptor", "about must be ./");
    if (refOf(descriptor.conformsTo) !== SPEC_URL)
      issue("ro-crate-metadata.json", "descriptor", `conformsTo must be ${SPEC_URL}`);
  }
  const root = byId.get("./");
  if (!root) issue("./", "root", "the root data entity is missing");
  else {
    if (![root["@type"]].flat().includes("Dataset")) issue("./", "root", "the root must be a Dataset");
    for (const key of ["name", "description", "datePublished", "license"]) {
      if (root[key] === undefined) issue("./", "root", `the root needs ${key}`);
    }
    if (typeof root.datePublished !== "string" || !ISO_DATE.test(root.datePublished)) {
      issue("./", "root", "datePublished must be one ISO 8601 date");
    }
  }
  const hasPart = new Set([root?.hasPart].flat().map(refOf));
  const present = new Set(files);
  for (const entity of graph) {
    const id = String(entity["@id"]);
    if (![entity["@type"]].flat().includes("File") || ABSOLUTE_IRI.test(id)) continue;
    if (!present.has(id)) issue(id, "data-entity", "a File entity's @id must be a file of the crate");
    if (!hasPart.has(id)) issue(id, "data-entity", "a data entity must be listed in the root's hasPart");
  }
  for (const file of files) {
    if (file === "ro-crate-metadata.json" || file === "ro-crate-preview.html") continue;
    if (!byId.has(file)) issue(file, "described", "every file of the crate must be a data entity");
  }
  return issues;
}

function termsOf(value: unknown, issue: (entity: string, rule: string, detail: string) => void): Set<string> {
  const terms = new Set<string>();
  const parts = [value].flat();
  if (parts[0] !== CONTEXT_URL) issue("(document)", "context", `@context must start with ${CONTEXT_URL}`);
  for (const part of parts) {
    if (part === CONTEXT_URL) for (const term of Object.keys(context)) terms.add(term);
    else if (part !== null && typeof part === "object") {
      for (const [term, iri] of Object.entries(part)) {
        if (typeof iri !== "string" || !ABSOLUTE_IRI.test(iri))
          issue("(document)", "context", `added term ${term} must map to an absolute IRI`);
        terms.add(term);
      }
    } else issue("(document)", "context", `unknown context ${String(part)}`);
  }
  return terms;
}

/** `rdf:Property`: a prefix the context defines, then a local name. */
function isCompactIri(name: string, terms: ReadonlySet<string>): boolean {
  const colon = name.indexOf(":");
  return colon > 0 && terms.has(name.slice(0, colon)) && !name.slice(colon + 1).startsWith("//");
}

function refOf(value: unknown): string | undefined {
  const id = (value as { "@id"?: unknown } | undefined)?.["@id"];
  return typeof id === "string" ? id : undefined;
}
