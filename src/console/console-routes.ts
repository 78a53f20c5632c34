/** Every route of the console, page by page. */
import type { ConsoleRoute } from "./console-route.js";
import { jobsRoutes } from "./page-jobs.js";
import { papersRoutes } from "./page-papers.js";
import { sourcesRoutes } from "./page-sources.js";

/** The console's routes. */
export function consoleRoutes(): ConsoleRoute[] {
  return [...sourcesRoutes, ...jobsRoutes, ...papersRoutes];
}
