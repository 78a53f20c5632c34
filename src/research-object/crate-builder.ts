/**
 * Builds the graph and the payload of a crate from what the exporter gathered: the fixed entities (root,
 * descriptor, profile, software, deciders, term definitions), licences, sources and tools, and each
 * object or file either copied (a `File` named by its SHA-256) or only referenced (an entity with the
 * same hash, `redistributed: false` and the reason in `conditionsOfAccess`).
 */
import { PACKAGE_VERSION, sha256Hex } from "../core/index.js";
import type { SourceManifest } from "../governance/manifests/index.js";
import type { CrateFile } from "./crate-files.js";
import { type CrateEntity, CrateGraph, ref } from "./crate-graph.js";
import {
  type DeciderKind,
  entityIds,
  METADATA_FILE,
  PROCESS_RUN_CRATE,
  RO_CRATE_SPEC,
  SCIENCEGATE_TERMS,
  type ScienceGateTerm,
} from "./crate-vocabulary.js";
import type { Redistribution } from "./redistribution.js";

const DECIDERS: Record<DeciderKind, { type: string; name: string; description: string }> = {
  person: {
    type: "Person",
    name: "A person who answered an approval card",
    description:
      "A human decision (user_once, user_grant, user_always, user_deny) on the card the call raised.",
  },
  operator: {
    type: "Person",
    name: "An operator",
    description: "A change made in the Sciencegate console or with the sciencegate command.",
  },
  grant: {
    type: "SoftwareApplication",
    name: "An earlier grant",
    description: "A grant a person made earlier in the session, matched on the call's grant scope.",
  },
  policy: {
    type: "SoftwareApplication",
    name: "Sciencegate's permission policy",
    description: "The policy found the call not dangerous, or the session's approval mode allowed it.",
  },
};

/** One piece of content and whether the crate may copy it. */
export interface CrateContent {
  sha256: string;
  /** Its size in bytes, when known. */
  size: number | undefined;
  /** The bytes, when they were readable and hash to `sha256`. */
  bytes: Uint8Array | undefined;
  redistribution: Redistribution;
  /** Why the bytes are absent, when they are (missing in the store, changed since). */
  unavailable?: string | undefined;
}

/** How a copied or referenced piece of content is described. */
export interface ContentDescription {
  /** The file's path when copied (its `@id`), e.g. `objects/<hex>.json`. */
  path: string;
  name: string;
  encodingFormat: string;
  licence?: string | undefined;
  description?: string | undefined;
  /** The absolute URL it was downloaded from, if it was. */
  contentUrl?: string | undefined;
  /** More properties of the entity. */
  extra?: Record<string, unknown> | undefined;
}

/** The graph and payload of a crate under construction. */
export class CrateBuilder {
  readonly graph = new CrateGraph();
  readonly #files = new Map<string, CrateFile>();

  /**
   * Starts a crate with its fixed entities.
   * @param root the root dataset's name, description and publication time
   */
  constructor(root: { name: string; description: string; datePublished: string }) {
    this.graph.add({
      "@id": METADATA_FILE,
      "@type": "CreativeWork",
      conformsTo: ref(RO_CRATE_SPEC),
      about: ref(entityIds.root),
    });
    this.graph.add({
      "@id": entityIds.root,
      "@type": "Dataset",
      name: root.name,
      description: root.description,
      datePublished: root.datePublished,
      license: ref("#crate-license"),
      conformsTo: ref(PROCESS_RUN_CRATE),
      publisher: ref(entityIds.software),
      hasPart: [],
      mentions: [],
    });
    this.graph.add({
      "@id": "#crate-license",
      "@type": "CreativeWork",
      name: "Each part under its own licence",
      description:
        "Every file states the licence of its content. Content of a private or controlled source, or under a " +
        "licence that does not allow redistribution, is not in this crate: it is referenced by its SHA-256 " +
        "(redistributed: false) with the reason in conditionsOfAccess.",
    });
    this.graph.add({
      "@id": PROCESS_RUN_CRATE,
      "@type": "CreativeWork",
      name: "Process Run Crate",
      version: "0.5",
    });
    this.graph.add({
      "@id": entityIds.software,
      "@type": "SoftwareApplication",
      name: "Sciencegate",
      description:
        "The governed path every tool call took (permission, validation, cache, rate limits, retries, " +
        "envelope checks, content-addressed storage, audit ledger), and the claim review (reviewAnswer).",
      softwareVersion: PACKAGE_VERSION,
      url: "https://www.npmjs.com/package/sciencegate",
    });
    for (const kind of Object.keys(DECIDERS) as DeciderKind[]) {
      const { type, name, description } = DECIDERS[kind];
      this.graph.add({ "@id": entityIds.decider(kind), "@type": type, name, description });
    }
    for (const [term, comment] of Object.entries(SCIENCEGATE_TERMS)) {
      this.graph.add({
        "@id": entityIds.term(term as ScienceGateTerm),
        "@type": "rdf:Property",
        "rdfs:label": term,
        "rdfs:comment": comment,
      });
    }
  }

  /**
   * The licence entity of a licence text (added once).
   * @param text the licence as a manifest, record or candidate states it
   * @returns its `@id`
   */
  licence(text: string): string {
    const id = entityIds.license(text);
    this.graph.add({ "@id": id, "@type": "CreativeWork", name: text, identifier: text });
    return id;
  }

  /**
   * The entity of a source (a `DataCatalog`), from its manifest when the catalog had it.
   * @param sourceId the source
   * @param manifest its manifest, if known
   * @returns its `@id`
   */
  source(sourceId: string, manifest: SourceManifest | undefined): string {
    const id = entityIds.source(sourceId);
    if (this.graph.has(id)) return id;
    const entity: CrateEntity = { "@id": id, "@type": "DataCatalog", name: sourceId, identifier: sourceId };
    if (manifest) {
      entity.name = manifest.displayName;
      entity.description = manifest.governance.attribution;
      entity.version = manifest.version;
      entity.url = manifest.governance.termsUrl;
      entity.license = ref(this.licence(manifest.governance.license));
      entity.dataClassification = manifest.governance.dataClassification;
    }
    this.graph.add(entity);
    return id;
  }

  /**
   * The entity of a tool (a `SoftwareApplication`, the instrument of its calls).
   * @param sourceId its source
   * @param toolId the tool
   * @param detail the MCP name, server and description when the catalog knows the tool
   * @returns its `@id`
   */
  tool(
    sourceId: string,
    toolId: string,
    detail: {
      mcpToolName?: string | undefined;
      serverId?: string | undefined;
      description?: string | undefined;
      version?: string | undefined;
    },
  ): string {
    const id = entityIds.tool(sourceId, toolId);
    if (this.graph.has(id)) return id;
    const entity: CrateEntity = {
      "@id": id,
      "@type": "SoftwareApplication",
      name: `${sourceId}/${toolId}`,
      sourceId,
      toolId,
      isPartOf: ref(entityIds.source(sourceId)),
    };
    if (detail.mcpToolName !== undefined) entity.mcpToolName = detail.mcpToolName;
    if (detail.serverId !== undefined) entity.serverId = detail.serverId;
    if (detail.description !== undefined) entity.description = detail.description;
    if (detail.version !== undefined) entity.softwareVersion = detail.version;
    this.graph.add(entity);
    return id;
  }

  /**
   * Describes a piece of content: copied as a file when its redistribution is allowed and its bytes are
   * at hand, else referenced by hash.
   * @param content the hash, size, bytes and decision
   * @param description its path, name, format, licence and other properties
   * @returns the `@id` of its entity
   */
  content(content: CrateContent, description: ContentDescription): string {
    const copied = content.redistribution.allowed && content.bytes !== undefined;
    const id = copied ? description.path : entityIds.withheld(content.sha256);
    const entity: CrateEntity = {
      "@id": id,
      "@type": copied ? "File" : "CreativeWork",
      name: description.name,
      encodingFormat: description.encodingFormat,
      sha256: content.sha256,
      redistributed: copied,
      ...description.extra,
    };
    if (content.size !== undefined) entity.contentSize = String(content.size);
    if (description.licence !== undefined) entity.license = ref(this.licence(description.licence));
    if (description.description !== undefined) entity.description = description.description;
    if (description.contentUrl !== undefined) entity.contentUrl = description.contentUrl;
    if (!copied) {
      entity.conditionsOfAccess = content.redistribution.allowed
        ? `Not in this crate: ${content.unavailable ?? "its bytes could not be read at export"}.`
        : `Referenced, not copied: ${content.redistribution.reason}.`;
    }
    if (this.graph.has(id)) return id;
    this.graph.add(entity);
    if (copied && content.bytes) this.#addFile(id, content.bytes);
    return id;
  }

  /**
   * Adds a payload file the crate itself made (the answer, the review, the tool catalog).
   * @param path its path and `@id`
   * @param bytes its content
   * @param entity its other properties
   * @returns its `@id`
   */
  ownFile(path: string, bytes: Uint8Array, entity: Omit<CrateEntity, "@id" | "@type">): string {
    this.graph.add({
      "@id": path,
      "@type": "File",
      contentSize: String(bytes.byteLength),
      sha256: sha256Hex(bytes),
      ...entity,
    });
    this.#addFile(path, bytes);
    return path;
  }

  /** The payload files, in the order they were added. */
  files(): CrateFile[] {
    return [...this.#files.values()];
  }

  #addFile(path: string, bytes: Uint8Array): void {
    if (this.#files.has(path)) return;
    this.#files.set(path, { path, bytes });
    this.graph.link(entityIds.root, "hasPart", path);
  }
}
