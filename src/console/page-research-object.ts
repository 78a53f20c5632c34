/**
 * "Export research object": a session (or a thread, with the reviewed answer) as an RO-Crate zip to
 * download, built by `exportResearchObject` from the runtime's ledger, store and catalog. Exporting only
 * reads, so the form is not a write; like every POST it carries the CSRF token.
 */
import { isGovernanceError } from "../core/index.js";
import { exportResearchObject, researchObjectZip } from "../research-object/index.js";
import { html, type SafeHtml } from "./console-html.js";
import type { ConsoleContext, ConsoleRoute } from "./console-route.js";

/** Characters of an answer exported at most (the form's body cap bounds it too). */
const MAX_ANSWER_CHARS = 1_000_000;

/** `POST /research-object`: the crate of `session` (and `thread`, `answer` when given) as a zip. */
export const researchObjectRoutes: readonly ConsoleRoute[] = [
  {
    method: "POST",
    pattern: "/research-object",
    async handle(request, context) {
      const session = field(request.form.get("session"));
      const thread = field(request.form.get("thread"));
      const answer = request.form.get("answer")?.slice(0, MAX_ANSWER_CHARS) || undefined;
      if (session === undefined) return failed("Name the session to export.", 400);
      try {
        const crate = await exportResearchObject({
          governance: context.governance,
          sessionId: session,
          threadId: thread,
          answer,
          clock: context.clock,
        });
        const name = `research-object-${session.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80)}.zip`;
        return {
          kind: "file",
          contentType: "application/zip",
          body: researchObjectZip(crate),
          headers: { "content-disposition": `attachment; filename="${name}"` },
        };
      } catch (error) {
        if (isGovernanceError(error) && error.code === "NOT_FOUND") return failed(error.message, 404);
        throw error;
      }
    },
  },
];

/**
 * The "Export research object" button for a session, with a thread and the answer it reviewed.
 * @param context the console (its CSRF token and base path)
 * @param target the session, and the thread and answer when a reviewed answer is exported
 * @returns the form
 */
export function researchObjectForm(
  context: ConsoleContext,
  target: { session: string; thread?: string | undefined; answer?: string | undefined },
): SafeHtml {
  return html`<form method="post" action="${context.href("/research-object")}" class="research-object-form">
<input type="hidden" name="_csrf" value="${context.csrfToken}">
<input type="hidden" name="session" value="${target.session}">
${target.thread === undefined ? "" : html`<input type="hidden" name="thread" value="${target.thread}">`}
${target.answer === undefined ? "" : html`<textarea name="answer" hidden>${target.answer}</textarea>`}
<button type="submit" id="export-research-object">Export research object</button>
<span class="muted">an RO-Crate zip: every call, authorization, object and download${target.answer === undefined ? "" : ", the answer's claims and their review"}</span>
</form>`;
}

function failed(message: string, status: number) {
  return {
    kind: "page" as const,
    title: "Export research object",
    section: "invocations" as const,
    status,
    body: html`<p class="error-box" role="alert" id="export-error">${message}</p>`,
  };
}

function field(value: string | null): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed.slice(0, 500);
}
