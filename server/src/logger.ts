/** pino JSON logger; `redact` keeps credentials out of the logs. */
import { pino, type DestinationStream, type Logger } from 'pino';
import { traceLogFields } from './tracing.js';

export type { Logger };

export interface LoggerOptions {
  /**
   * add `trace_id` and `span_id` of the active OpenTelemetry span to every line (a pino mixin; main.ts sets
   * it when OTEL_EXPORTER_OTLP_ENDPOINT is set, so a service without tracing pays nothing for it)
   */
  traceIds?: boolean;
  /** where lines go (default stdout; tests read them) */
  destination?: DestinationStream;
}

export function createLogger(level = 'info', opts: LoggerOptions = {}): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'bazaar' },
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'res.headers["set-cookie"]'],
      censor: '[redacted]',
    },
    ...(opts.traceIds ? { mixin: traceLogFields } : {}),
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
