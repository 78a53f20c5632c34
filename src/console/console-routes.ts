/** Every route of the console, page by page. */
import type { ConsoleRoute } from "./console-route.js";
import { evidenceRoutes } from "./page-evidence.js";
import { invocationRoutes } from "./page-invocation.js";
import { invocationsRoutes } from "./page-invocations.js";
import { jobsRoutes } from "./page-jobs.js";
import { objectRoutes } from "./page-object.js";
import { papersRoutes } from "./page-papers.js";
import { permissionsRoutes } from "./page-permissions.js";
import { researchObjectRoutes } from "./page-research-object.js";
import { sourcesRoutes } from "./page-sources.js";

/** The console's routes. */
export function consoleRoutes(): ConsoleRoute[] {
  return [
    ...sourcesRoutes,
    ...invocationsRoutes,
    ...invocationRoutes,
    ...objectRoutes,
    ...evidenceRoutes,
    ...researchObjectRoutes,
    ...jobsRoutes,
    ...papersRoutes,
    ...permissionsRoutes,
  ];
}
