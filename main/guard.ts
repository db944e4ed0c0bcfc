/**
 * The facade's "never throw into the host app" rule in one place: an operation that throws is
 * logged (when `debug` is on) and answers its documented fallback instead.
 */
import type { Logger } from './logger.js';

/**
 * Wraps every function of `operations` so it cannot throw; a failed call answers `fallback(name)`
 * (the facade passes `fallbackOf`, the one table in `operation-fallbacks.ts`) and logs `name() failed`.
 */
export function guardAll<T extends object>(operations: T, fallback: (name: string) => unknown, log: Logger): T {
  const guarded: Record<string, unknown> = {};
  for (const [name, operation] of Object.entries(operations)) {
    if (typeof operation !== 'function') continue;
    guarded[name] = (...args: unknown[]): unknown => {
      try {
        return (operation as (...a: unknown[]) => unknown)(...args);
      } catch (error) {
        log.error(`${name}() failed`, error);
        return fallback(name);
      }
    };
  }
  return guarded as T;
}
