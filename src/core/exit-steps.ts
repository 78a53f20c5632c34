/**
 * Work that must still happen when the process exits normally (`process.exit()`, or the end of its work):
 * no later turn of the event loop will come, so each step runs synchronously. Steps of the `hand-over`
 * phase (a broker handing its pending rows to the ledger) run before those of the `commit` phase (a
 * ledger committing its queue), so that what is handed over is committed too.
 */
type ExitPhase = "hand-over" | "commit";

const phases: Record<ExitPhase, Set<() => void>> = { "hand-over": new Set(), commit: new Set() };
let installed = false;

function runExitSteps(): void {
  for (const phase of [phases["hand-over"], phases.commit]) {
    for (const step of phase) {
      try {
        step();
      } catch {
        // The process is ending: what cannot be done now is lost either way.
      }
    }
  }
}

/**
 * Runs `step` when the process exits normally, until removed. Adding the same step again is a no-op.
 * @param phase `hand-over` steps run before `commit` steps
 * @param step synchronous work
 * @returns removes the step
 */
export function atExit(phase: ExitPhase, step: () => void): () => void {
  if (!installed) {
    installed = true;
    process.on("exit", runExitSteps);
  }
  phases[phase].add(step);
  return () => {
    phases[phase].delete(step);
  };
}
