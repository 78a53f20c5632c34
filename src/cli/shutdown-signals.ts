/** SIGTERM and SIGINT as the long-running commands (`serve gateway`, `console`) wait for them. */

/**
 * Calls `listener` with the signal's name on SIGTERM and SIGINT.
 * @param listener called with `"SIGTERM"` or `"SIGINT"`
 * @returns a function that stops listening
 */
export function onShutdownSignal(listener: (signal: string) => void): () => void {
  const onTerm = () => listener("SIGTERM");
  const onInt = () => listener("SIGINT");
  process.on("SIGTERM", onTerm);
  process.on("SIGINT", onInt);
  return () => {
    process.off("SIGTERM", onTerm);
    process.off("SIGINT", onInt);
  };
}
