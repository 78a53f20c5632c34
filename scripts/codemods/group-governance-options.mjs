#!/usr/bin/env node
/**
 * Codemod: flat `createGovernance` options → the grouped `GovernanceOptions`
 * (`mcp`, `manifests`, `storage`, `permissions`, `limits`, `downloads`).
 *
 * It rewrites every object literal whose contextual type is a governance options type (one with a
 * `closeGraceMs` property: `GovernanceOptions`, `TestGovernanceOptions`, `ReplayGovernanceOptions`,
 * `FromMultiServerClientOptions`, …; not the runtime's internal flat form), including literals spread into one. It is idempotent: run it
 * again after merging new tests. Literals it cannot see (a variable built without a type, then passed)
 * are left to `npm run typecheck`; literals with spreads are listed, because two spreads that both
 * carry one group replace each other's group (check those by hand).
 *
 * Usage: node scripts/codemods/group-governance-options.mjs [--dry] [file-or-dir …]
 *   (default: src test examples bench; then `npx biome check --write` the files it names)
 */
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";

/** flat key → [group, key in the group] */
const MOVES = {
  pool: ["mcp", "pool"],
  createTransport: ["mcp", "createTransport"],
  failOnServerError: ["mcp", "failOnError"],
  oauthCredentials: ["mcp", "oauthCredentials"],
  sampling: ["mcp", "sampling"],
  manifestDirs: ["manifests", "dirs"],
  builtinManifests: ["manifests", "builtin"],
  dataDir: ["storage", "dataDir"],
  ledger: ["storage", "ledger"],
  store: ["storage", "contentStore"],
  grants: ["storage", "grants"],
  sessionState: ["storage", "sessionState"],
  jobStore: ["storage", "jobStore"],
  enforcePermissions: ["permissions", "enforce"],
  authorize: ["permissions", "authorize"],
  permissionPolicy: ["permissions", "policy"],
  rateLimits: ["limits", "rateLimits"],
  quotas: ["limits", "quotas"],
  fetch: ["downloads", "fetch"],
};
/** Keys `createTestGovernance` owns itself (its own `servers`/`manifests`, its data directory). */
const TEST_GOVERNANCE_KEEPS = new Set([
  "pool",
  "createTransport",
  "manifestDirs",
  "builtinManifests",
  "dataDir",
]);

const args = process.argv.slice(2);
const dry = args.includes("--dry");
const roots = args.filter((a) => a !== "--dry");
const root = process.cwd();
const targets = (roots.length > 0 ? roots : ["src", "test", "examples", "bench"]).map((p) =>
  resolve(root, p),
);

function walk(path, out) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return out;
  if (st.isDirectory()) {
    if (path.endsWith("node_modules") || path.endsWith("/dist")) return out;
    for (const name of readdirSync(path)) walk(join(path, name), out);
  } else if (/\.(ts|mts|tsx)$/.test(path) && !path.endsWith(".d.ts")) out.push(path);
  return out;
}
const files = targets.flatMap((t) => walk(t, []));
const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile).config;
const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root);
const wanted = new Set(files);

let pass = 0;
const changed = new Set();
const withSpreads = new Set();
for (;;) {
  pass++;
  const program = ts.createProgram([...new Set([...parsed.fileNames, ...files])], parsed.options);
  const checker = program.getTypeChecker();
  let edits = 0;
  for (const sf of program.getSourceFiles()) {
    if (!wanted.has(sf.fileName)) continue;
    const fileEdits = [];
    const visit = (node) => {
      if (ts.isObjectLiteralExpression(node)) {
        const edit = rewrite(node, checker, sf);
        if (edit) {
          fileEdits.push(edit);
          return; // nested literals get their turn in the next pass
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
    if (fileEdits.length === 0) continue;
    let text = sf.text;
    for (const e of fileEdits.sort((a, b) => b.start - a.start)) {
      text = text.slice(0, e.start) + e.text + text.slice(e.end);
    }
    edits += fileEdits.length;
    changed.add(sf.fileName);
    if (!dry) writeFileSync(sf.fileName, text);
  }
  if (edits === 0 || dry || pass > 6) break;
}
for (const f of changed) console.log(`changed ${f.slice(root.length + 1)}`);
for (const f of withSpreads) console.log(`check spreads by hand: ${f}`);

/** The options type family: the literal's contextual type has `closeGraceMs`. */
function governanceKind(node, checker) {
  const type = checker.getContextualType(node);
  if (!type) {
    // A literal spread into (or chosen by a conditional inside) a governance literal.
    let p = node.parent;
    while (
      p &&
      (ts.isParenthesizedExpression(p) || ts.isConditionalExpression(p) || ts.isBinaryExpression(p))
    ) {
      p = p.parent;
    }
    if (p && ts.isSpreadAssignment(p)) return governanceKind(p.parent, checker);
    return undefined;
  }
  const candidates = type.isUnion() ? type.types : [type];
  for (const t of candidates) {
    // The runtime's internal flat form (`FlatGovernanceOptions`) keeps the flat names.
    if (t.getProperty("closeGraceMs") && !t.getProperty("enforcePermissions"))
      return t.getProperty("approvals") ? "test" : "runtime";
  }
  return undefined;
}

function rewrite(node, checker, sf) {
  const kind = governanceKind(node, checker);
  if (!kind) return undefined;
  const moving = [];
  for (const prop of node.properties) {
    if (!(ts.isPropertyAssignment(prop) || ts.isShorthandPropertyAssignment(prop))) continue;
    if (!prop.name || !(ts.isIdentifier(prop.name) || ts.isStringLiteral(prop.name))) continue;
    const key = prop.name.text;
    if (!(key in MOVES)) continue;
    if (kind === "test" && TEST_GOVERNANCE_KEEPS.has(key)) continue;
    moving.push(prop);
  }
  if (moving.length === 0) return undefined;
  if (node.properties.some((p) => ts.isSpreadAssignment(p))) {
    withSpreads.add(
      `${sf.fileName.slice(root.length + 1)}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`,
    );
  }
  const groups = new Map();
  for (const prop of moving) {
    const key = prop.name.text;
    const [group, inner] = MOVES[key];
    const comments = sf.text.slice(prop.getFullStart(), prop.getStart(sf)).trim();
    const value = ts.isShorthandPropertyAssignment(prop)
      ? inner === key
        ? key
        : `${inner}: ${key}`
      : `${inner}: ${prop.initializer.getText(sf)}`;
    const entry = comments ? `${comments}\n${value}` : value;
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(entry);
  }
  // Rebuild the literal's properties in order: a group takes the place of its first member, or
  // merges into an existing group property of the literal.
  const out = [];
  const emitted = new Set();
  const existing = new Map();
  for (const prop of node.properties) {
    if (
      ts.isPropertyAssignment(prop) &&
      prop.name &&
      ts.isIdentifier(prop.name) &&
      groups.has(prop.name.text)
    ) {
      existing.set(prop.name.text, prop);
    }
  }
  const groupText = (group) => {
    const entries = groups.get(group);
    const prop = existing.get(group);
    if (!prop) return `${group}: { ${entries.join(", ")} }`;
    const init = prop.initializer;
    if (ts.isObjectLiteralExpression(init)) {
      const old = init.properties.map((p) => sf.text.slice(p.getFullStart(), p.getEnd()).trim());
      return `${group}: { ${[...old, ...entries].join(", ")} }`;
    }
    return `${group}: { ...${init.getText(sf)}, ${entries.join(", ")} }`;
  };
  for (const prop of node.properties) {
    const full = sf.text.slice(prop.getFullStart(), prop.getEnd()).trim();
    if (moving.includes(prop)) {
      const [group] = MOVES[prop.name.text];
      if (!emitted.has(group) && !existing.has(group)) {
        emitted.add(group);
        out.push(groupText(group));
      }
      continue;
    }
    if (existing.has(prop.name?.text) && existing.get(prop.name.text) === prop) {
      emitted.add(prop.name.text);
      out.push(groupText(prop.name.text));
      continue;
    }
    out.push(full);
  }
  const multiline = sf.text.slice(node.getStart(sf), node.getEnd()).includes("\n");
  const text = multiline ? `{\n${out.join(",\n")},\n}` : `{ ${out.join(", ")} }`;
  return { start: node.getStart(sf), end: node.getEnd(), text };
}
