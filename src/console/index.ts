export {
  type CheckpointerThreadAnswerOptions,
  checkpointerThreadAnswer,
} from "./checkpointer-thread-answer.js";
export { type ConsoleChange, recordConsoleChange } from "./console-audit.js";
export { type ConsoleHandler, type ConsoleHandlerOptions, createConsoleHandler } from "./console-handler.js";
export { assertConsoleBind, CONSOLE_TOKEN_ENV } from "./console-security.js";
export { type ConsoleServer, type ConsoleServerOptions, serveConsole } from "./serve-console.js";
