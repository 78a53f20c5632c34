/**
 * Plain text of the MathML that PubMed titles and abstracts embed (`<mml:math>`): scripts as Unicode
 * super/subscripts (`³He`, `¹²⁹Xe`, `O₂`), accents as combining marks (`V̇`), fractions and roots spelled out.
 * Flattening the tree instead reads "He 3 / Xe 129 MRI" or "V . O 2 m a x". Written by hand because no
 * library renders MathML to text; it covers the Presentation MathML elements that abstracts use.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { scriptText } from "./unicode-scripts.js";

type OrderedNode = Record<string, unknown>;

const MATH_OPEN = /<(?:([A-Za-z][\w.-]{0,30}):)?math\b[^<>]{0,2000}>/g;

/** Accents MathML writes as an over- or underscript, and the combining mark each is. */
const ACCENTS: Record<string, string> = {
  ".": "\u0307",
  "˙": "\u0307",
  "\u0307": "\u0307",
  "¨": "\u0308",
  "..": "\u0308",
  "^": "\u0302",
  ˆ: "\u0302",
  "~": "\u0303",
  "˜": "\u0303",
  "¯": "\u0304",
  "‾": "\u0305",
  "―": "\u0305",
  "→": "\u20d7",
  "⃗": "\u20d7",
  "´": "\u0301",
  "`": "\u0300",
  ˇ: "\u030c",
  "˘": "\u0306",
};
const UNDER_ACCENTS: Record<string, string> = { _: "\u0332", "‾": "\u0332", "¯": "\u0331", "~": "\u0330" };
/** Invisible operators (function application, times, separator, plus): nothing to read. */
const INVISIBLE = /[\u2061-\u2064]/g;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  removeNSPrefix: true,
  trimValues: false,
  parseTagValue: false,
  processEntities: true,
  htmlEntities: true,
});

/**
 * Replaces each MathML island of a markup string by its plain text (escaped again, so that the caller's tag
 * stripping and entity decoding treat it as text).
 * @param raw inner XML of a title or abstract, entities not yet decoded
 * @returns the markup with every `<math>` element rendered; an island that does not parse is left as it was
 */
export function renderMathml(raw: string): string {
  if (!raw.includes("math")) return raw;
  // A scan with indexOf, not one lazy regex over the whole text: hostile text with many unclosed openings
  // stays linear.
  const open = new RegExp(MATH_OPEN.source, "g");
  let out = "";
  let last = 0;
  for (let match = open.exec(raw); match; match = open.exec(raw)) {
    const closing = `</${match[1] ? `${match[1]}:` : ""}math>`;
    const close = raw.indexOf(closing, open.lastIndex);
    if (close < 0) break;
    const end = close + closing.length;
    out += raw.slice(last, match.index) + renderIsland(raw.slice(match.index, end));
    last = end;
    open.lastIndex = end;
  }
  return out + raw.slice(last);
}

function renderIsland(island: string): string {
  // The parser does not check nesting; a malformed island is kept as the provider wrote it.
  if (XMLValidator.validate(island) !== true) return island;
  const tree = parser.parse(island) as OrderedNode[];
  return escapeMarkup(render(tree).replace(INVISIBLE, "").replace(/\s+/g, " ").trim());
}

function escapeMarkup(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The element name and children of an ordered node, or its text. */
function parts(node: OrderedNode): { name: string; children: OrderedNode[]; attrs: Record<string, string> } {
  const name = Object.keys(node).find((key) => key !== ":@") ?? "";
  const value = node[name];
  const attrs = (node[":@"] as Record<string, string> | undefined) ?? {};
  return { name, children: Array.isArray(value) ? (value as OrderedNode[]) : [], attrs };
}

function render(nodes: OrderedNode[]): string {
  return nodes.map(renderNode).join("");
}

/** The element children (whitespace between elements is layout, not content). */
function elements(nodes: OrderedNode[]): OrderedNode[] {
  return nodes.filter((node) => !("#text" in node));
}

function renderNode(node: OrderedNode): string {
  if ("#text" in node) return "";
  const { name, children, attrs } = parts(node);
  const args = elements(children);
  const arg = (index: number) => render(args[index] ? [args[index]] : []);
  switch (name) {
    case "mi":
    case "mn":
    case "mo":
    case "ms":
      return tokenText(children).trim();
    case "mtext":
      return tokenText(children).replace(/\s+/g, " ");
    case "mspace":
      return " ";
    case "annotation":
    case "annotation-xml":
    case "mphantom":
    case "none":
    case "mprescripts":
      return "";
    case "semantics":
      return arg(0);
    case "msub":
      return arg(0) + scriptText(arg(1), "sub");
    case "msup":
      return arg(0) + scriptText(arg(1), "sup");
    case "msubsup":
      return arg(0) + scriptText(arg(1), "sub") + scriptText(arg(2), "sup");
    case "mmultiscripts":
      return multiscripts(args);
    case "mover":
      return over(arg(0), arg(1), attrs.accent);
    case "munder":
      return under(arg(0), arg(1));
    case "munderover":
      return `${arg(0)}${scriptText(arg(1), "sub")}${scriptText(arg(2), "sup")}`;
    case "mfrac":
      return `${grouped(arg(0))}/${grouped(arg(1))}`;
    case "msqrt":
      return `√${grouped(render(args))}`;
    case "mroot":
      return `${scriptText(arg(1), "sup")}√${grouped(arg(0))}`;
    case "mfenced":
      return fenced(args, attrs);
    case "mtable":
      return `[${args.map(renderNode).join("; ")}]`;
    case "mtr":
    case "mlabeledtr":
      return args.map(renderNode).join(", ");
    default:
      return render(args);
  }
}

function tokenText(children: OrderedNode[]): string {
  return children.map((child) => (typeof child["#text"] === "string" ? child["#text"] : "")).join("");
}

/** `<mmultiscripts>`: base, then post-script pairs, then `<mprescripts/>` and pre-script pairs. */
function multiscripts(args: OrderedNode[]): string {
  const [base, ...rest] = args;
  const split = rest.findIndex((node) => parts(node).name === "mprescripts");
  const post = split < 0 ? rest : rest.slice(0, split);
  const pre = split < 0 ? [] : rest.slice(split + 1);
  return `${pairs(pre)}${base ? renderNode(base) : ""}${pairs(post)}`;
}

function pairs(nodes: OrderedNode[]): string {
  let text = "";
  for (let i = 0; i < nodes.length; i += 2) {
    const sub = nodes[i] ? renderNode(nodes[i] as OrderedNode) : "";
    const sup = nodes[i + 1] ? renderNode(nodes[i + 1] as OrderedNode) : "";
    text += scriptText(sub, "sub") + scriptText(sup, "sup");
  }
  return text;
}

function over(base: string, script: string, accent: string | undefined): string {
  const mark = ACCENTS[script.trim()];
  if (mark && accent !== "false") return withMark(base, mark);
  return `${base}${scriptText(script, "sup")}`;
}

function under(base: string, script: string): string {
  const mark = UNDER_ACCENTS[script.trim()];
  return mark ? withMark(base, mark) : `${base}${scriptText(script, "sub")}`;
}

/** A combining mark goes on a single character; over a longer base it reads as the mark's spacing form. */
function withMark(base: string, mark: string): string {
  return [...base].length === 1 ? `${base}${mark}` : `(${base})${mark}`;
}

function grouped(text: string): string {
  return [...text].length <= 1 || /^[\p{L}\p{N}.]+$/u.test(text) ? text : `(${text})`;
}

function fenced(args: OrderedNode[], attrs: Record<string, string>): string {
  const open = attrs.open ?? "(";
  const close = attrs.close ?? ")";
  const separator = (attrs.separators ?? ",").trim().charAt(0) || ",";
  return `${open}${args.map(renderNode).join(`${separator} `)}${close}`;
}
