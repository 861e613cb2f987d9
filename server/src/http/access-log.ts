/**
 * The JSON access log: one line per request with what an operator needs to follow it: request id, method,
 * URL, client address, status and response time (ms), as pino-http wrote it:
 *
 *   {"level":30,...,"req":{"id","method","url","remote"},"res":{"status"},"responseTime":3,"msg":"request completed"}
 *
 * at `info`, `warn` for a 4xx, `error` with `err` and "request errored" for a 5xx or a response that failed.
 *
 * pino-http's default serializers wrote every request and response header into each line (1 124 bytes
 * for an anonymous GET /listings/{id}, issue 14): a CPU profile under load put ~8 % of the server's time
 * in building and writing them. Headers are left out (so credentials never reach the log either); the
 * request id joins the line to the client's X-Request-Id and to the problem+json `request_id`.
 *
 * Issue 28 item 1: written here instead of by pino-http, which built two child loggers per request (their
 * bindings serialised at creation) for a line that needs none; `req.log` (a child logger with the request's
 * fields, for the rare middleware that logs about a request) is built only when read.
 */
import type { Request, RequestHandler } from 'express';
import type { Logger } from '../logger.js';

/** The access-log middleware over `log`; /healthz is not logged. */
export function accessLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    if (req.url === '/healthz') return next();
    const start = Date.now();
    const line = { id: (req as Request & { id?: string }).id, method: req.method, url: req.url, remote: req.socket?.remoteAddress };
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', { configurable: true, enumerable: false, get: () => (child ??= log.child({ req: line })) });
    const done = (err?: Error) => {
      res.removeListener('close', onClose);
      res.removeListener('finish', onFinish);
      res.removeListener('error', onError);
      const responseTime = Date.now() - start;
      const status = res.statusCode;
      if (err || status >= 500) {
        log.error({ req: line, res: { status }, err: err ?? new Error(`failed with status code ${status}`), responseTime }, 'request errored');
      } else if (status >= 400) log.warn({ req: line, res: { status }, responseTime }, 'request completed');
      else log.info({ req: line, res: { status }, responseTime }, 'request completed');
    };
    const onClose = () => done();
    const onFinish = () => done();
    const onError = (err: Error) => done(err);
    res.on('close', onClose);
    res.on('finish', onFinish);
    res.on('error', onError);
    next();
  };
}
