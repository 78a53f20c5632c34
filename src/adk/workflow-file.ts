/** Reading `workflow.json`: the nodes of a workflow and the tools each declares. */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { GovernanceError } from "../core/index.js";
import type { ToolDeclaration } from "./tool-use-verified.js";

const nodeSchema = z.looseObject({
  id: z.string().min(1),
  kind: z.string().optional(),
  tools: z.array(z.string().min(1)).optional(),
});
const workflowSchema = z.union([z.array(nodeSchema), z.looseObject({ nodes: z.array(nodeSchema) })]);

/**
 * Loads the node declarations of a workflow file: `{"nodes": [{id, kind, tools}]}` or a bare array.
 * @param path the file
 * @returns the declarations in file order
 * @throws GovernanceError `INVALID_CONFIG` naming the file and the problem
 */
export async function loadWorkflowDeclarations(path: string): Promise<ToolDeclaration[]> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new GovernanceError("INVALID_CONFIG", `${path} cannot be read as JSON: ${reason}`);
  }
  const parsed = workflowSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`);
    throw new GovernanceError(
      "INVALID_CONFIG",
      `${path} is not a workflow ({"nodes": [{"id", "kind", "tools"}]}): ${issues.join("; ")}`,
    );
  }
  const nodes = Array.isArray(parsed.data) ? parsed.data : parsed.data.nodes;
  return nodes.map((n) => ({
    id: n.id,
    ...(n.kind === undefined ? {} : { kind: n.kind }),
    ...(n.tools === undefined ? {} : { tools: n.tools }),
  }));
}
