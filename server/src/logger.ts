/** pino JSON logger; `redact` keeps credentials out of the logs. */
import { pino, type Logger } from 'pino';
import { traceLogFields } from './tracing.js';

export type { Logger };

export interface LoggerOptions {
  /**
   * add `trace_id` and `span_id` of the active OpenTelemetry span to every line (a pino mixin; main.ts sets
   * it when OTEL_EXPORTER_OTLP_ENDPOINT is set, so a service without tracing pays nothing for it)
   */
  traceIds?: boolean;
}

export function createLogger(level = 'info', opts: LoggerOptions = {}): Logger {
  return pino({
    level,
    base: { service: 'bazaar' },
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'res.headers["set-cookie"]'],
      censor: '[redacted]',
    },
    ...(opts.traceIds ? { mixin: traceLogFields } : {}),
  });
}
