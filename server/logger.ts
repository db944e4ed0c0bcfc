/** Severity of a log line. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Structured fields of a log line. Never put keys or event bodies here. */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

/** The server's logger: one JSON object per line. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * A JSON-lines logger writing to `write` (stderr by default), dropping lines below `level`.
 * @param level lowest level written. @default 'info'
 */
export function createJsonLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (line) => process.stderr.write(line),
  now: () => number = () => Date.now(),
): Logger {
  const min = ORDER[level];
  const log = (lvl: LogLevel, msg: string, fields?: LogFields): void => {
    if (ORDER[lvl] < min) return;
    write(`${JSON.stringify({ time: new Date(now()).toISOString(), level: lvl, msg, ...fields })}\n`);
  };
  return {
    debug: (m, f) => log('debug', m, f),
    info: (m, f) => log('info', m, f),
    warn: (m, f) => log('warn', m, f),
    error: (m, f) => log('error', m, f),
  };
}

/** A logger that drops everything (tests, benchmarks). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
