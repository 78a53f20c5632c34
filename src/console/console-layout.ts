/**
 * The frame of every console page: the navigation, the read-only notice and the page's own body. Styles
 * and the little client script are the console's own files (`/assets/`), never inline.
 */
import { html, type SafeHtml } from "./console-html.js";
import type { ConsoleContext, ConsoleSection } from "./console-route.js";

const SECTIONS: readonly { section: ConsoleSection; label: string; path: string }[] = [
  { section: "sources", label: "Sources", path: "/sources" },
  { section: "invocations", label: "Invocations", path: "/invocations" },
  { section: "evidence", label: "Evidence", path: "/evidence" },
  { section: "jobs", label: "Downloads", path: "/jobs" },
  { section: "papers", label: "Papers", path: "/papers" },
  { section: "permissions", label: "Permissions", path: "/permissions" },
];

/**
 * A whole page.
 * @param context the console's context (links, mode)
 * @param page the title, the section and the body
 */
export function renderLayout(
  context: ConsoleContext,
  page: { title: string; section: ConsoleSection; body: SafeHtml },
): SafeHtml {
  const nav = SECTIONS.map(
    ({ section, label, path }) =>
      html`<a href="${context.href(path)}"${section === page.section ? html` aria-current="page"` : ""}>${label}</a>`,
  );
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="${context.href("/assets/favicon.svg")}" type="image/svg+xml">
<title>${page.title} · Sciencegate console</title>
<link rel="stylesheet" href="${context.href("/assets/console.css")}">
<script src="${context.href("/assets/console.js")}" defer></script>
</head>
<body>
<header class="top">
<a class="brand" href="${context.href("/sources")}">Sciencegate</a>
<nav aria-label="Sections">${nav}</nav>
<span class="mode ${context.writable ? "mode-writable" : "mode-readonly"}" title="${
    context.writable
      ? "Write actions (revoke, modes, switches, cancel, retry) are on."
      : "Read-only: start the console with --writable to revoke grants, change modes and switches, cancel and retry jobs."
  }">${context.writable ? "writable" : "read-only"}</span>
<button type="button" class="theme-toggle" data-theme-toggle aria-label="Switch light or dark theme">◐</button>
</header>
<main id="main">
<h1>${page.title}</h1>
${page.body}
</main>
</body>
</html>`;
}
