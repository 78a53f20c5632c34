/**
 * Work that must still happen when the process exits normally (`process.exit()`, or the end of its work):
 * no later turn of the event loop will come, so each step runs synchronously. The ledger's writer is
 * the one user: it commits the rows it still holds (see ARCHITECTURE.md, "Record").
 */
const steps = new Set<() => void>();
let installed = false;

function runExitSteps(): void {
  for (const step of steps) {
    try {
      step();
    } catch {
      // The process is ending: what cannot be done now is lost either way.
    }
  }
}

/**
 * Runs `step` when the process exits normally, until removed. Adding the same step again is a no-op.
 * @param step synchronous work
 * @returns removes the step
 */
export function atExit(step: () => void): () => void {
  if (!installed) {
    installed = true;
    process.on("exit", runExitSteps);
  }
  steps.add(step);
  return () => {
    steps.delete(step);
  };
}
