/**
 * Whether a manifest's input schema (local) still fits the live MCP tool's input schema (remote).
 * The broker validates arguments against the local schema and forwards them, so the question is:
 * will every argument object the local schema accepts also be accepted by the remote one, as far as
 * types, required properties and closed objects can tell?
 *
 * Hand-written because no library answers JSON Schema subsumption with these (deliberately
 * partial) rules; keywords such as `anyOf`, `enum` or `pattern` are not compared.
 */

/** The result of a compatibility check. */
export type SchemaCompatibility = { compatible: true } | { compatible: false; reasons: string[] };

type Schema = Record<string, unknown>;

/**
 * Compares a local (manifest) input schema with a remote (live tool) one.
 *
 * Rules: top-level types agree; every property the remote requires is required locally; when the
 * remote has `additionalProperties: false`, every local property exists remotely; where both sides
 * declare a property type, each local type must be accepted remotely (`integer` locally fits
 * `number` remotely, but `number` locally does not fit `integer` remotely, since 1.5 would be
 * rejected); arrays compare their `items`; nested objects are compared by the same rules.
 * @param local the manifest's `inputSchema`
 * @param remote the live tool's `inputSchema`
 * @returns `{compatible: true}` or every reason, each naming the property path
 */
export function inputSchemasCompatible(local: unknown, remote: unknown): SchemaCompatibility {
  const reasons: string[] = [];
  compare(asSchema(local), asSchema(remote), "", reasons);
  return reasons.length === 0 ? { compatible: true } : { compatible: false, reasons };
}

function compare(
  local: Schema | undefined,
  remote: Schema | undefined,
  path: string,
  reasons: string[],
): void {
  // `true`/`{}` or a missing schema constrains nothing, so there is nothing to disagree with.
  if (local === undefined || remote === undefined) return;
  const where = path === "" ? "input" : `property "${path}"`;
  const localTypes = typesOf(local);
  const remoteTypes = typesOf(remote);
  if (localTypes && remoteTypes) {
    const rejected = localTypes.filter((type) => !accepts(remoteTypes, type));
    if (rejected.length > 0) {
      reasons.push(
        `${where}: type ${show(localTypes)} in the manifest, but the server accepts ${show(remoteTypes)}`,
      );
      return; // Deeper differences of mismatched types only repeat the same problem.
    }
  }
  if (isObjectSchema(local, localTypes) || isObjectSchema(remote, remoteTypes)) {
    compareObjects(local, remote, path, reasons);
  }
  if (local.items !== undefined || remote.items !== undefined) {
    compare(asSchema(local.items), asSchema(remote.items), `${path}[]`, reasons);
  }
}

function compareObjects(local: Schema, remote: Schema, path: string, reasons: string[]): void {
  const prefix = path === "" ? "" : `${path}.`;
  const localProps = propertiesOf(local);
  const remoteProps = propertiesOf(remote);
  const localRequired = new Set(requiredOf(local));
  for (const name of requiredOf(remote)) {
    if (!localRequired.has(name)) {
      reasons.push(`property "${prefix}${name}" is required by the server but not by the manifest`);
    }
  }
  if (remote.additionalProperties === false) {
    for (const name of Object.keys(localProps)) {
      if (!Object.hasOwn(remoteProps, name)) {
        reasons.push(
          `property "${prefix}${name}" is declared in the manifest but the server does not know it ` +
            "and allows no additional properties",
        );
      }
    }
  }
  for (const [name, localProp] of Object.entries(localProps)) {
    if (Object.hasOwn(remoteProps, name)) {
      compare(asSchema(localProp), asSchema(remoteProps[name]), `${prefix}${name}`, reasons);
    }
  }
}

function accepts(remoteTypes: readonly string[], localType: string): boolean {
  return remoteTypes.includes(localType) || (localType === "integer" && remoteTypes.includes("number"));
}

function typesOf(schema: Schema): string[] | undefined {
  const type = schema.type;
  if (typeof type === "string") return [type];
  if (Array.isArray(type) && type.every((t) => typeof t === "string")) return type as string[];
  return undefined;
}

function isObjectSchema(schema: Schema, types: readonly string[] | undefined): boolean {
  return types?.includes("object") ?? (schema.properties !== undefined || schema.required !== undefined);
}

function propertiesOf(schema: Schema): Record<string, unknown> {
  const props = schema.properties;
  return typeof props === "object" && props !== null && !Array.isArray(props)
    ? (props as Record<string, unknown>)
    : {};
}

function requiredOf(schema: Schema): string[] {
  return Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [];
}

function asSchema(value: unknown): Schema | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Schema) : undefined;
}

function show(types: readonly string[]): string {
  return types.length === 1 ? `"${types[0]}"` : `[${types.map((t) => `"${t}"`).join(", ")}]`;
}
