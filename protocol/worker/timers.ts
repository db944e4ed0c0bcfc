/**
 * The one timer seam of the client, main thread and worker alike: everything that waits takes
 * these two functions, so tests drive time with fake timers and nothing captures a global at
 * import (docs/architecture.md, "Conventions"). A module of types plus the platform's default;
 * the main thread imports the type only.
 */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The platform's timers, looked up when called, never captured at import. */
export function platformTimers(): Timers {
  return {
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  };
}
