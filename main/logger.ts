/** Debug logging: silent unless `debug` is on, so a production page pays nothing for it. */

/** Where the facade reports what it dropped, skipped or fell back from. */
export interface Logger {
  debug(message: string, detail?: unknown): void;
  warn(message: string, detail?: unknown): void;
  error(message: string, detail?: unknown): void;
}

const PREFIX = '[service-analytics]';

/** A logger that writes to `console` when `enabled`, and does nothing otherwise. */
export function createLogger(enabled: boolean): Logger {
  if (!enabled) return SILENT;
  const write = (level: 'debug' | 'warn' | 'error', message: string, detail: unknown): void => {
    try {
      if (detail === undefined) console[level](`${PREFIX} ${message}`);
      else console[level](`${PREFIX} ${message}`, detail);
    } catch {
      // A console replaced by something that throws must not break the caller.
    }
  };
  return {
    debug: (message, detail) => write('debug', message, detail),
    warn: (message, detail) => write('warn', message, detail),
    error: (message, detail) => write('error', message, detail),
  };
}

const noop = (): void => {};

/** The logger of a client without `debug`. */
export const SILENT: Logger = { debug: noop, warn: noop, error: noop };
