/**
 * The Permissions page's writes: revoke a grant, set a session's approval mode, switch a source on or
 * off for a session. Each checks its fields, makes the change through the runtime the app uses, and
 * audits it with one `operator_console` authorization row.
 */
import { checkPrincipal, GovernanceError } from "../core/index.js";
import type { ApprovalMode, Grant } from "../governance/permissions/index.js";
import type { Governance } from "../runtime/index.js";
import { recordConsoleChange } from "./console-audit.js";
import type { ConsoleContext, ConsoleRequest, ConsoleRoute } from "./console-route.js";

/** The approval modes an operator may set. */
export const APPROVAL_MODES: readonly ApprovalMode[] = ["ask_for_dangerous", "always_allow"];

/** The longest session id the console accepts (LangGraph thread ids and gateway sessions are far shorter). */
export const MAX_SESSION_ID_LENGTH = 512;
const MAX_ID_LENGTH = 256;
// C0 and C1 control characters: never part of a real id, and invisible on the page.
const CONTROL = /\p{Cc}/u;

/** `POST /grants/:id/revoke`, `POST /users/revoke`, `POST /sessions/mode`, `POST /sessions/source`. */
export const permissionsActionRoutes: readonly ConsoleRoute[] = [
  {
    method: "POST",
    pattern: "/grants/:id/revoke",
    writes: true,
    async handle(request, context) {
      const id = idField(request.params.id, "id", "grant id", MAX_ID_LENGTH);
      const grant = await context.governance.permissions.revokeGrant(id);
      await recordRevocation(grant, request, context);
      return { kind: "redirect", location: "/permissions?done=revoked" };
    },
  },
  {
    method: "POST",
    pattern: "/users/revoke",
    writes: true,
    async handle(request, context) {
      const user = principalField(request.form.get("user"));
      if (user === undefined) throw invalid("user", "Field 'user' is empty: enter the user.");
      const { permissions } = context.governance;
      // One audited revocation per grant, as the per-grant button records it.
      for (const grant of await permissions.listGrants({ principal: user })) {
        await permissions.revokeGrant(grant.id);
        await recordRevocation(grant, request, context);
      }
      return {
        kind: "redirect",
        location: `/permissions?done=revoked-user&user=${encodeURIComponent(user)}`,
      };
    },
  },
  {
    method: "POST",
    pattern: "/sessions/mode",
    writes: true,
    async handle(request, context) {
      const sessionId = sessionIdOf(request.form.get("session"), "session");
      const mode = request.form.get("mode") ?? "";
      const user = principalField(request.form.get("user"));
      if (!(APPROVAL_MODES as readonly string[]).includes(mode)) {
        throw invalid("mode", `Field 'mode' must be ${APPROVAL_MODES.join(" or ")}.`);
      }
      await context.governance.permissions.setApprovalMode(sessionId, mode as ApprovalMode, user);
      await recordConsoleChange(
        context.governance,
        {
          sessionId,
          sourceId: "console",
          toolId: "approval_mode",
          action: "set_approval_mode",
          resource: `mode:${mode}`,
        },
        { clock: context.clock, actor: request.principal },
      );
      return { kind: "redirect", location: "/permissions?done=mode" };
    },
  },
  {
    method: "POST",
    pattern: "/sessions/source",
    writes: true,
    async handle(request, context) {
      const sessionId = sessionIdOf(request.form.get("session"), "session");
      const sourceId = knownSource(context.governance, request.form.get("source"));
      const state = request.form.get("enabled") ?? "";
      if (state !== "on" && state !== "off") throw invalid("enabled", "Field 'enabled' must be on or off.");
      const { sessions } = context.governance;
      await (state === "on"
        ? sessions.enableSource(sessionId, sourceId)
        : sessions.disableSource(sessionId, sourceId));
      await recordConsoleChange(
        context.governance,
        {
          sessionId,
          sourceId,
          toolId: "source_switch",
          action: state === "on" ? "enable_source" : "disable_source",
          resource: `source:${sourceId}`,
        },
        { clock: context.clock, actor: request.principal },
      );
      return { kind: "redirect", location: `/permissions?done=${state === "on" ? "enabled" : "disabled"}` };
    },
  },
];

/**
 * A user (principal) from a form or query: blank is none.
 * @param value the raw value
 * @returns the principal, or `undefined`
 * @throws GovernanceError `INVALID_INPUT` for a value `checkPrincipal` refuses
 */
export function principalField(value: string | null | undefined): string | undefined {
  return checkPrincipal(value?.trim() ?? undefined, "field 'user'");
}

/**
 * A session id from a form or query: trimmed, non-empty, at most `MAX_SESSION_ID_LENGTH` characters,
 * without control characters.
 * @param value the raw value
 * @param field the field's name, for the error
 * @returns the session id
 * @throws GovernanceError `INVALID_INPUT` naming the field
 */
export function sessionIdOf(value: string | null | undefined, field: string): string {
  return idField(value, field, "session id", MAX_SESSION_ID_LENGTH);
}

/**
 * The known sources a session's switch may name: the registry's manifests and the catalog's sources
 * (derived ones included), sorted.
 * @param governance the runtime
 * @returns source ids
 */
export function knownSourceIds(governance: Governance): string[] {
  const ids = new Set([
    ...governance.registry.list().map((manifest) => manifest.id),
    ...governance.catalog.sources().map((source) => source.id),
  ]);
  return [...ids].sort();
}

function knownSource(governance: Governance, value: string | null): string {
  const sourceId = idField(value, "source", "source id", MAX_ID_LENGTH);
  const known = knownSourceIds(governance);
  if (!known.includes(sourceId)) {
    throw invalid(
      "source",
      `Unknown source '${sourceId}' in field 'source'; known sources: ${known.join(", ") || "none"}.`,
    );
  }
  return sourceId;
}

function idField(value: string | null | undefined, field: string, what: string, max: number): string {
  const name = `Field '${field}' (${what})`;
  const id = (value ?? "").trim();
  if (id === "") throw invalid(field, `${name} is empty: enter the ${what}.`);
  if (id.length > max) {
    throw invalid(field, `${name} has ${id.length} characters; at most ${max} are accepted.`);
  }
  if (CONTROL.test(id))
    throw invalid(field, `${name} contains control characters; enter the ${what} as text.`);
  return id;
}

function invalid(field: string, message: string): GovernanceError {
  return new GovernanceError("INVALID_INPUT", message, { data: { field } });
}

/** Records one revoked grant as the console's change, by the acting principal. */
async function recordRevocation(
  grant: Grant,
  request: ConsoleRequest,
  context: ConsoleContext,
): Promise<void> {
  await recordConsoleChange(
    context.governance,
    {
      sessionId: grant.sessionId,
      sourceId: grant.resource.split(":")[0] || "console",
      toolId: "grant",
      action: "revoke_grant",
      resource: grant.resource,
    },
    { clock: context.clock, actor: request.principal },
  );
}
