/**
 * The JSON-LD shape of `ro-crate-metadata.json`: a flat `@graph` of entities, each with an `@id` and an
 * `@type`, linking each other by `{"@id": …}` references, and the small helpers that read it back.
 */
import { GovernanceError } from "../core/index.js";
import { CRATE_CONTEXT } from "./crate-vocabulary.js";

/** A reference to another entity (or an absolute URL). */
export interface EntityRef {
  "@id": string;
}

/** One entity of the graph. Property values are text, numbers, booleans, references or lists of them. */
export interface CrateEntity {
  "@id": string;
  "@type": string | string[];
  [property: string]: unknown;
}

/** The parsed `ro-crate-metadata.json`. */
export interface CrateMetadata {
  "@context": unknown;
  "@graph": CrateEntity[];
}

/**
 * A reference to an entity.
 * @param id the entity's `@id`
 * @returns `{"@id": id}`
 */
export function ref(id: string): EntityRef {
  return { "@id": id };
}

/**
 * The graph as it is built: entities by id, in the order they were first added (so the same session
 * always yields the same file). Adding an id twice merges the properties, lists joined without repeats.
 */
export class CrateGraph {
  readonly #entities = new Map<string, CrateEntity>();
  /** The ids each list property of an entity references, for `link`. */
  readonly #linked = new Map<string, Set<string>>();

  /**
   * Adds an entity, or merges it into the one with the same id.
   * @param entity the entity
   * @returns the entity as held by the graph
   * @throws GovernanceError `INVALID_INPUT` when a merge would change a scalar property
   */
  add(entity: CrateEntity): CrateEntity {
    const held = this.#entities.get(entity["@id"]);
    if (held === undefined) {
      this.#entities.set(entity["@id"], entity);
      return entity;
    }
    for (const [key, value] of Object.entries(entity)) {
      const before = held[key];
      if (before === undefined) held[key] = value;
      else if (Array.isArray(before) || Array.isArray(value)) {
        held[key] = joinValues(before, value);
        this.#linked.delete(`${entity["@id"]}\u0000${key}`);
      } else if (JSON.stringify(before) !== JSON.stringify(value)) {
        throw new GovernanceError(
          "INVALID_INPUT",
          `Entity ${entity["@id"]} was described twice with different ${key} values.`,
        );
      }
    }
    return held;
  }

  /**
   * Adds references to a list property of an entity already in the graph, without repeats.
   * @param id the entity
   * @param property the list property, e.g. `hasPart`
   * @param ids the referenced ids
   */
  link(id: string, property: string, ...ids: string[]): void {
    const entity = this.#entities.get(id);
    if (entity === undefined) throw new GovernanceError("UNKNOWN_ID", `No entity ${id} in the crate.`);
    // Lists such as the root's hasPart grow by thousands: each link is checked against a set, not the list.
    const key = `${id}\u0000${property}`;
    let linked = this.#linked.get(key);
    let list = entity[property];
    if (linked === undefined || !Array.isArray(list)) {
      list = asList(list);
      linked = new Set(refIds(list));
      this.#linked.set(key, linked);
      entity[property] = list;
    }
    for (const target of ids) {
      if (linked.has(target)) continue;
      linked.add(target);
      (list as unknown[]).push(ref(target));
    }
  }

  /** Whether an entity with this id was added. */
  has(id: string): boolean {
    return this.#entities.has(id);
  }

  /** The metadata document: the context and every entity. */
  toMetadata(): CrateMetadata {
    return { "@context": CRATE_CONTEXT, "@graph": [...this.#entities.values()] };
  }
}

function joinValues(before: unknown, value: unknown): unknown[] {
  const out = [...asList(before)];
  const seen = new Set(out.map((item) => JSON.stringify(item)));
  for (const item of asList(value)) {
    const key = JSON.stringify(item);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(item);
    }
  }
  return out;
}

/**
 * A property value as a list (absent is empty).
 * @param value a property value
 * @returns the values
 */
export function asList(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * The ids a property references.
 * @param value a property value
 * @returns the `@id` of every reference in it
 */
export function refIds(value: unknown): string[] {
  return asList(value).flatMap((item) =>
    typeof item === "object" && item !== null && typeof (item as EntityRef)["@id"] === "string"
      ? [(item as EntityRef)["@id"]]
      : [],
  );
}

/**
 * Whether an entity has a type.
 * @param entity the entity
 * @param type a type name, e.g. `CreateAction`
 */
export function hasType(entity: CrateEntity, type: string): boolean {
  return asList(entity["@type"]).includes(type);
}

/**
 * The entities of a metadata document by id (the first of a repeated id wins; the validator reports repeats).
 * @param metadata the parsed metadata
 * @returns a map from `@id` to entity
 */
export function indexGraph(metadata: CrateMetadata): Map<string, CrateEntity> {
  const byId = new Map<string, CrateEntity>();
  for (const entity of metadata["@graph"]) if (!byId.has(entity["@id"])) byId.set(entity["@id"], entity);
  return byId;
}

/**
 * A text property, or `undefined` when it is absent or not text.
 * @param entity the entity
 * @param property the property
 */
export function textOf(entity: CrateEntity | undefined, property: string): string | undefined {
  const value = entity?.[property];
  return typeof value === "string" ? value : undefined;
}
