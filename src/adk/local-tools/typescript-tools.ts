/**
 * TypeScript/JavaScript local tools: exported functions read with the TypeScript compiler API.
 * `typescript` is loaded lazily (only a project with `[tools.local]` TypeScript files pays for it).
 */
import { pathToFileURL } from "node:url";
import type * as TS from "typescript";

type TsApi = typeof TS;

import { importPeer, type JsonSchema, type LocalTool } from "./local-tool.js";

/** A function's signature as a tool, before it is bound to the module that runs it. */
export interface ExtractedFunction {
  name: string;
  description: string;
  /** Parameter names in declaration order (arguments are passed positionally). */
  parameters: string[];
  inputSchema: LocalTool["inputSchema"];
}

/** File names that hold tools (declarations and tests do not). */
export const TYPESCRIPT_TOOL_FILE = /^(?!.*\.(?:d|test|spec)\.[cm]?[jt]s$).*\.(?:[cm]?ts|[cm]?js)$/;

/**
 * Extracts every exported function of a TypeScript or JavaScript file whose name does not start with `_`.
 * @param file absolute path of the file
 * @returns name, TSDoc description, positional parameter names and the JSON schema of each function
 */
export async function extractTypeScriptFunctions(file: string): Promise<ExtractedFunction[]> {
  // `typescript` is CommonJS: its API is the default export under NodeNext.
  const ts = (
    await importPeer(
      "typescript",
      () => import("typescript"),
      "local TypeScript and JavaScript tools are read with the TypeScript compiler",
    )
  ).default as unknown as TsApi;
  const program = ts.createProgram([file], {
    allowJs: true,
    checkJs: false,
    noEmit: true,
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  if (!source || !moduleSymbol) return [];
  const out: ExtractedFunction[] = [];
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const name = symbol.getName();
    if (name.startsWith("_") || name === "default") continue;
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const declaration = target.valueDeclaration;
    const fn = declaration && functionOf(ts, declaration);
    if (!fn) continue;
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    const parameters: string[] = [];
    for (const param of fn.parameters) {
      if (!ts.isIdentifier(param.name) || param.dotDotDotToken) continue;
      const paramName = param.name.text;
      parameters.push(paramName);
      const schema = typeToSchema(ts, checker, checker.getTypeAtLocation(param), param, 0);
      const fallback = param.initializer && literalValue(ts, param.initializer);
      if (fallback !== undefined) schema.default = fallback;
      properties[paramName] = schema;
      if (!param.questionToken && !param.initializer) required.push(paramName);
    }
    out.push({
      name,
      description: ts.displayPartsToString(target.getDocumentationComment(checker)).trim(),
      parameters,
      inputSchema: { type: "object", properties, ...(required.length > 0 ? { required } : {}) },
    });
  }
  return out;
}

/**
 * Loads the tools of one TypeScript/JavaScript file: extracted schemas bound to the module's functions.
 * @param file absolute path of the file
 * @returns the file's tools
 * @throws MissingRequirement when `typescript` (or, for a `.ts` file under plain Node, `tsx`) is not installed
 */
export async function loadTypeScriptTools(file: string): Promise<LocalTool[]> {
  const functions = await extractTypeScriptFunctions(file);
  if (functions.length === 0) return [];
  const module = await importToolModule(file);
  return functions.flatMap((fn) => {
    const impl = module[fn.name];
    if (typeof impl !== "function") return [];
    return [
      {
        name: fn.name,
        description: fn.description,
        inputSchema: fn.inputSchema,
        file,
        run: async (args: Record<string, unknown>) =>
          await (impl as (...a: unknown[]) => unknown)(
            // Own keys only: an absent argument named `toString` is undefined, not a prototype member.
            ...fn.parameters.map((p) => (Object.hasOwn(args, p) ? args[p] : undefined)),
          ),
      },
    ];
  });
}

/**
 * Imports a tool file; under plain Node a `.ts` file goes through tsx's loader, loaded only then.
 * @throws MissingRequirement when that takes tsx and it is not installed
 */
async function importToolModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ERR_UNKNOWN_FILE_EXTENSION") throw error;
    const { tsImport } = await importPeer(
      "tsx",
      () => import("tsx/esm/api"),
      "plain Node runs local TypeScript tools through tsx",
    );
    return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
  }
}

function functionOf(ts: TsApi, node: TS.Node): TS.SignatureDeclaration | undefined {
  if (ts.isFunctionDeclaration(node)) return node;
  if (ts.isVariableDeclaration(node) && node.initializer) {
    const init = node.initializer;
    if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return init;
  }
  return undefined;
}

function typeToSchema(
  ts: TsApi,
  checker: TS.TypeChecker,
  type: TS.Type,
  at: TS.Node,
  depth: number,
): JsonSchema {
  if (depth > 6 || type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return {};
  if (type.isUnion()) {
    const members = type.types.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)));
    if (members.length > 0 && members.every((t) => t.flags & ts.TypeFlags.BooleanLiteral)) {
      return { type: "boolean" };
    }
    if (members.every((t) => t.isLiteral() || t.flags & ts.TypeFlags.BooleanLiteral)) {
      const values = members.map((t) => literalOf(checker, t));
      const kinds = new Set(values.map((v) => typeof v));
      return kinds.size === 1 ? { type: [...kinds][0] as string, enum: values } : { enum: values };
    }
    if (members.length === 1) return typeToSchema(ts, checker, members[0] as TS.Type, at, depth);
    return { anyOf: members.map((t) => typeToSchema(ts, checker, t, at, depth + 1)) };
  }
  if (type.flags & ts.TypeFlags.NumberLike) {
    return type.isNumberLiteral() ? { type: "number", enum: [type.value] } : { type: "number" };
  }
  if (type.flags & ts.TypeFlags.StringLike) {
    return type.isStringLiteral() ? { type: "string", enum: [type.value] } : { type: "string" };
  }
  if (type.flags & ts.TypeFlags.BooleanLike) return { type: "boolean" };
  if (checker.isArrayType(type) || checker.isTupleType(type)) {
    const [item] = checker.getTypeArguments(type as TS.TypeReference);
    return checker.isArrayType(type) && item
      ? { type: "array", items: typeToSchema(ts, checker, item, at, depth + 1) }
      : { type: "array" };
  }
  if (type.flags & ts.TypeFlags.Object) {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const prop of checker.getPropertiesOfType(type)) {
      const propType = checker.getTypeOfSymbolAtLocation(prop, at);
      properties[prop.getName()] = typeToSchema(ts, checker, propType, at, depth + 1);
      if (!(prop.flags & ts.SymbolFlags.Optional)) required.push(prop.getName());
    }
    const schema: JsonSchema = { type: "object", properties };
    if (required.length > 0) schema.required = required;
    const index = checker.getIndexInfoOfType(type, ts.IndexKind.String);
    if (index) schema.additionalProperties = typeToSchema(ts, checker, index.type, at, depth + 1);
    return schema;
  }
  return {};
}

function literalOf(checker: TS.TypeChecker, type: TS.Type): unknown {
  if (type.isLiteral()) return typeof type.value === "object" ? String(type.value) : type.value;
  return checker.typeToString(type) === "true";
}

/** A parameter default written as a JSON-like literal; anything computed is left out of the schema. */
function literalValue(ts: TsApi, node: TS.Expression): unknown {
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken) {
    const inner = literalValue(ts, node.operand);
    return typeof inner === "number" ? -inner : undefined;
  }
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (ts.isArrayLiteralExpression(node)) {
    const items = node.elements.map((e) => literalValue(ts, e));
    return items.every((i) => i !== undefined) ? items : undefined;
  }
  return undefined;
}
