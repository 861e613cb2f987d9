/**
 * The JSON access log (pino-http): one line per request with what an operator needs to follow it:
 * request id, method, URL, client address, status and response time (ms).
 *
 * pino-http's default serializers wrote every request and response header into each line (1 124 bytes
 * for an anonymous GET /listings/{id}, issue 14): a CPU profile under load put ~8 % of the server's time
 * in building and writing them. Headers are left out (so credentials never reach the log either); the
 * request id joins the line to the client's X-Request-Id and to the problem+json `request_id`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp, type HttpLogger } from 'pino-http';
import type { Logger } from '../logger.js';

/** The access-log middleware over `log`; /healthz is not logged. */
export function accessLog(log: Logger): HttpLogger {
  return pinoHttp({
    logger: log,
    genReqId: (req) => (req as unknown as { id: string }).id,
    autoLogging: { ignore: (req) => req.url === '/healthz' },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    serializers: {
      req: (req: IncomingMessage & { id?: string; raw?: IncomingMessage }) => {
        const raw = req.raw ?? req;
        return { id: req.id, method: raw.method, url: raw.url, remote: raw.socket?.remoteAddress };
      },
      res: (res: ServerResponse & { raw?: ServerResponse }) => ({ status: (res.raw ?? res).statusCode }),
    },
  });
}
