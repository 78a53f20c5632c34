/**
 * `ro-crate-preview.html`: the crate for people, rendered from its metadata alone: the answer with each
 * fact's verdict and the calls behind it, every call with its authorization and objects, the cited
 * records and the files with their licences. Every value is escaped (records and errors are
 * third-party text), and the page's content security policy allows no script.
 */
import {
  asList,
  type CrateEntity,
  type CrateMetadata,
  hasType,
  indexGraph,
  refIds,
  textOf,
} from "./crate-graph.js";
import { entityIds } from "./crate-vocabulary.js";

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text made safe for HTML content and attribute values. */
function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const STYLE = `
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1d2430}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d6dbe3}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eceff3;vertical-align:top}
th{background:#f5f7fa}code{font-size:12px}.ok{color:#166534;font-weight:600}.bad{color:#b91c1c;font-weight:600}
.muted{color:#5b6472}.fact{border-left:4px solid #d6dbe3;padding:.3rem .8rem;margin:.6rem 0}.fact.ok-fact{border-color:#16a34a}.fact.bad-fact{border-color:#dc2626}
.withheld{color:#92400e}`;

/**
 * Renders the preview of a crate.
 * @param metadata the crate's metadata
 * @returns the HTML document
 */
export function renderCratePreview(metadata: CrateMetadata): string {
  const byId = indexGraph(metadata);
  const root = byId.get(entityIds.root);
  const all = metadata["@graph"];
  const of = (type: string) => all.filter((entity) => hasType(entity, type));
  const link = (id: string, label?: string) => {
    const entity = byId.get(id);
    const text = label ?? textOf(entity, "name") ?? id;
    if (entity && hasType(entity, "File")) return `<a href="${escapeHtml(id)}">${escapeHtml(text)}</a>`;
    if (id.startsWith("#")) return `<a href="${escapeHtml(id)}">${escapeHtml(text)}</a>`;
    return /^https?:\/\//.test(id)
      ? `<a href="${escapeHtml(id)}" rel="noreferrer">${escapeHtml(text)}</a>`
      : escapeHtml(text);
  };
  const sections = [
    `<h1>${escapeHtml(textOf(root, "name"))}</h1>`,
    `<p>${escapeHtml(textOf(root, "description"))}</p>`,
    `<p class="muted">Published ${escapeHtml(textOf(root, "datePublished"))} · RO-Crate 1.1 · Process Run Crate 0.5 · ` +
      `verify with <code>sciencegate verify-crate &lt;this folder or zip&gt;</code></p>`,
    answerSection(byId, of("Claim"), link),
    callsSection(byId, of("CreateAction"), link),
    authorizationsSection(of("AuthorizeAction"), link),
    recordsSection(
      byId,
      all.filter((e) => e["@id"].startsWith("#record-")),
      link,
    ),
    filesSection(
      byId,
      all.filter((e) => typeof e.sha256 === "string"),
      link,
    ),
  ];
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    `<title>${escapeHtml(textOf(root, "name"))}</title><style>${STYLE}</style></head><body>`,
    ...sections,
    "</body></html>",
    "",
  ].join("\n");
}

type Link = (id: string, label?: string) => string;

function answerSection(byId: Map<string, CrateEntity>, claims: CrateEntity[], link: Link): string {
  if (claims.length === 0)
    return '<h2>Answer</h2><p class="muted">No answer was exported with this session.</p>';
  const review = byId.get(entityIds.answerReview);
  const facts = claims.map((claim) => {
    const verdict = [...byId.values()].find(
      (e) => hasType(e, "ClaimReview") && refIds(e.itemReviewed).includes(claim["@id"]),
    );
    const accepted = refIds(verdict?.reviewRating)[0] === entityIds.ratingAccepted;
    const records = refIds(claim.citation).map((id) =>
      link(id, `${textOf(byId.get(id), "citationLabel") ?? id}`),
    );
    const calls = refIds(claim.isBasedOn).map((id) => link(id, textOf(byId.get(id), "name")));
    return (
      `<div class="fact ${accepted ? "ok-fact" : "bad-fact"}" id="${escapeHtml(claim["@id"].slice(1))}">` +
      `<span class="${accepted ? "ok" : "bad"}">${accepted ? "✓ accepted" : "✗ not backed"}</span> ` +
      `${escapeHtml(textOf(claim, "text"))}<br><span class="muted">cites ${records.join(", ") || "nothing"}; ` +
      `rests on ${calls.join(", ") || "no call"}. ${escapeHtml(textOf(verdict, "reviewBody"))}</span></div>`
    );
  });
  return `<h2>Answer (${escapeHtml(textOf(review, "reviewBody"))})</h2>${link(entityIds.answerFile, "answer.md")} · ${link(entityIds.reviewFile, "review.json")}${facts.join("")}`;
}

function callsSection(byId: Map<string, CrateEntity>, actions: CrateEntity[], link: Link): string {
  const rows = actions.map((action, index) => {
    const failed = refIds(action.actionStatus)[0]?.endsWith("FailedActionStatus") ?? false;
    const auth = byId.get(refIds(action.authorization)[0] ?? "");
    const objects = (["request", "rawResult", "cachedRawResult", "normalizedResult"] as const).flatMap(
      (key) =>
        refIds(action[key]).map((id) => {
          const entity = byId.get(id);
          const label = key === "cachedRawResult" ? "raw (cache origin)" : key.replace("Result", "");
          return entity?.redistributed === false
            ? `<span class="withheld" title="${escapeHtml(textOf(entity, "conditionsOfAccess"))}">${escapeHtml(label)}: withheld</span>`
            : link(id, label);
        }),
    );
    const more = refIds(action.result)
      .filter((id) => !/^objects\/|^#withheld-/.test(id))
      .map((id) => link(id));
    return (
      `<tr id="${escapeHtml(action["@id"].slice(1))}"><td>${index + 1}</td><td>${escapeHtml(textOf(action, "startTime"))}</td>` +
      `<td>${escapeHtml(textOf(action, "name"))}</td><td class="${failed ? "bad" : "ok"}">` +
      `${failed ? escapeHtml(textOf(action, "errorCode") ?? "error") : "ok"}${action.cacheHit === true ? " (cache)" : ""}</td>` +
      `<td>${escapeHtml(action.attempts)}</td><td>${auth ? link(auth["@id"], textOf(auth, "decisionSource")) : '<span class="muted">none</span>'}</td>` +
      `<td>${[...objects, ...more].join(" · ")}${failed ? `<br><span class="muted">${escapeHtml(textOf(action, "error"))}</span>` : ""}</td></tr>`
    );
  });
  return (
    `<h2>Governed calls (${actions.length})</h2><table><tr><th>#</th><th>started</th><th>tool</th><th>outcome</th>` +
    `<th>attempts</th><th>authorized by</th><th>objects</th></tr>${rows.join("")}</table>`
  );
}

function authorizationsSection(auths: CrateEntity[], link: Link): string {
  const rows = auths.map(
    (auth) =>
      `<tr id="${escapeHtml(auth["@id"].slice(1))}"><td>${escapeHtml(textOf(auth, "endTime"))}</td><td>${escapeHtml(textOf(auth, "decisionSource"))}</td>` +
      `<td>${link(refIds(auth.agent)[0] ?? "")}</td><td>${escapeHtml(textOf(auth, "permissionAction"))}</td>` +
      `<td>${escapeHtml(textOf(auth, "grantScope"))}</td><td>${refIds(auth.object)
        .map((id) => link(id, "call"))
        .join(", ")}</td></tr>`,
  );
  return (
    `<h2>Authorizations (${auths.length})</h2><table><tr><th>when</th><th>decision</th><th>decided by</th>` +
    `<th>action</th><th>scope</th><th>calls</th></tr>${rows.join("")}</table>`
  );
}

function recordsSection(byId: Map<string, CrateEntity>, records: CrateEntity[], link: Link): string {
  if (records.length === 0) return "";
  const rows = records.map((record) => {
    const licence = byId.get(refIds(record.license)[0] ?? "");
    const url = textOf(record, "url");
    return (
      `<tr id="${escapeHtml(record["@id"].slice(1))}"><td>${escapeHtml(textOf(record, "citationLabel"))}</td>` +
      `<td>${url ? link(url, textOf(record, "name")) : escapeHtml(textOf(record, "name"))}</td><td>${escapeHtml(textOf(record, "version") ?? "")}</td>` +
      `<td>${licence ? link(licence["@id"], textOf(licence, "name")) : ""}${record.conditionsOfAccess ? `<br><span class="withheld">${escapeHtml(record.conditionsOfAccess)}</span>` : ""}</td></tr>`
    );
  });
  return `<h2>Cited records (${records.length})</h2><table><tr><th>label</th><th>title</th><th>version</th><th>licence</th></tr>${rows.join("")}</table>`;
}

function filesSection(byId: Map<string, CrateEntity>, items: CrateEntity[], link: Link): string {
  const rows = items.map((item) => {
    const licence = byId.get(refIds(item.license)[0] ?? "");
    const held = item.redistributed !== false;
    return (
      `<tr><td>${held ? link(item["@id"], item["@id"]) : `<span class="withheld">${escapeHtml(item["@id"])}</span>`}</td>` +
      `<td>${escapeHtml(textOf(item, "name"))}</td><td>${escapeHtml(textOf(item, "contentSize") ?? "")}</td>` +
      `<td><code>${escapeHtml(String(item.sha256).slice(0, 16))}…</code></td><td>${licence ? escapeHtml(textOf(licence, "name")) : ""}</td>` +
      `<td>${held ? "copied" : `<span class="withheld">${escapeHtml(textOf(item, "conditionsOfAccess"))}</span>`}</td></tr>`
    );
  });
  const withheld = items.filter((item) => item.redistributed === false).length;
  return (
    `<h2>Files and objects (${items.length}, ${withheld} referenced only)</h2><table><tr><th>path</th><th>what</th>` +
    `<th>bytes</th><th>SHA-256</th><th>licence</th><th>copy</th></tr>${rows.join("")}</table>` +
    `<p class="muted">${asList(byId.get(entityIds.root)?.hasPart).length} files in the crate.</p>`
  );
}
