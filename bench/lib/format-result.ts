/** Renders a `BenchResult` as plain-text tables for the terminal. */
import type { BenchResult } from "./bench-result.js";

function number(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  return value.toFixed(3);
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)];
}

/**
 * @param result one benchmark's outcome
 * @returns the text to print: title, parameters, metrics with targets and verdicts, ratios, notes
 */
export function formatResult(result: BenchResult): string {
  const params = Object.entries(result.parameters)
    .map(([key, value]) => `${key}=${value}`)
    .join(" ");
  const metrics = table(
    ["metric", "value", "unit", "target", "verdict"],
    result.metrics.map((m) => [
      m.name,
      number(m.value),
      m.unit,
      m.target === undefined ? "" : `${m.atLeast ? ">=" : "<="} ${number(m.target)}`,
      m.verdict ?? "",
    ]),
  );
  const ratios = table(
    ["ratio", "ours", "baseline", "unit", "ours/baseline"],
    result.ratios.map((r) => [r.name, number(r.ours), number(r.baseline), r.unit, `${number(r.ratio)}x`]),
  );
  return [
    `== ${result.name}: ${result.description}`,
    params ? `   ${params}` : "",
    "",
    ...metrics,
    "",
    ...ratios,
    ...(result.notes.length > 0 ? ["", ...result.notes.map((n) => `* ${n}`)] : []),
    "",
  ].join("\n");
}
