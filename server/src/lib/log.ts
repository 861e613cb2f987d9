/**
 * The logger a module is given: pino's call shapes (`log.warn({ err }, 'message')`; server/src/logger.ts
 * builds the real one), declared structurally so tests can pass a stub. A module that logs at fewer
 * levels takes `Pick<Log, 'warn' | 'error'>` and the like.
 */
export interface Log {
  info: (...a: unknown[]) => void;
  warn: (...a: unknown[]) => void;
  error: (...a: unknown[]) => void;
}

/** A Log that drops everything: the default of modules whose logger is optional. */
export const silentLog: Log = { info() {}, warn() {}, error() {} };
