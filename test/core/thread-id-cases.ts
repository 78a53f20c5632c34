/**
 * The thread ids every executor must read alike: some LangGraph clients send numeric thread ids, and an
 * empty one means "not given" (`sessionIdOf`, `threadIdOf`).
 */
export const THREAD_ID_CASES = [
  { given: 42, sessionId: "42", threadId: "42" },
  { given: "42", sessionId: "42", threadId: "42" },
  { given: "", sessionId: "default", threadId: undefined },
  { given: undefined, sessionId: "default", threadId: undefined },
] as const;
