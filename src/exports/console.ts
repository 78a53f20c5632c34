/**
 * `sciencegate/console`: the Sciencegate console (sources, invocations, evidence, downloads, papers and
 * permissions in the browser) as a request handler to mount in an app's own server, or served alone.
 */
export { checkpointerThreadAnswer, createConsoleHandler, serveConsole } from "../console/index.js";
