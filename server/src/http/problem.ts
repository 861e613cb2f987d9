/**
 * The one place where errors become RFC 9457 problem details (`application/problem+json`):
 * {type, title, status, detail, instance, request_id, trace_id (only while tracing), ...extensions}.
 *
 * - DomainError(slug, detail, extensions)             -> the slug's status (contract problems table)
 * - ts-rest RequestValidationError                     -> 400 validation-error, errors: [{path, message, code}]
 * - a request target over MAX_URL_BYTES (8 KiB)       -> 414 uri-too-long (refuseLongUrl)
 * - body-parser: invalid JSON / too large / charset   -> 400 malformed-json / 413 payload-too-large / 415
 * - body-parser: Content-Encoding does not decode, body
 *   shorter than Content-Length                        -> 400 malformed-request
 * - Express: path parameter not percent-decodable      -> 400 malformed-request, errors: [{path: params.<name>}]
 * - database unreachable (gone, failing over)          -> 503 database-unavailable + Retry-After (db/errors.ts)
 * - database overloaded / timed out / conflict         -> 503 service-unavailable + Retry-After (db/errors.ts)
 * - ChainActionLandedError (a chain action landed, the
 *   write after it failed)                             -> 503 (database) or 500, with `chain_transaction`
 * - no route for the path                              -> 404 route-not-found
 * - the path exists with other methods                 -> 405 method-not-allowed + Allow (route-table.ts)
 * - anything else                                      -> 500 internal-error (logged; no stack or message leaks)
 */
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { AppRoute } from '@ts-rest/core';
import { RequestValidationError } from '@ts-rest/express';
import { PROBLEM_CONTENT_TYPE, problemTypeUri, type ProblemFieldError } from '@bazaar/contract';
import type { ZodError } from 'zod';
import { classifyDbError } from '../db/errors.js';
import { ChainActionLandedError, DomainError, problemInfo, type AnyProblemSlug } from '../errors.js';
import type { Logger } from '../logger.js';
import { allowedMethods, declaresBody, undecodableParam } from './route-table.js';
import { isSolanaPayPath, solanaPayErrorFields } from './solana-pay-errors.js';
import { explorerOf } from './explorer-links.js';
import { withExplorerLinks } from '../lib/explorer.js';

const PROBLEM_BASE = 'https://bazaar.dev/problems/';

export function requestIdOf(req: Request): string {
  return (req as Request & { id?: string }).id ?? String(req.headers['x-request-id'] ?? '');
}

/**
 * The problem body for `req`: `trace_id` is the request's OpenTelemetry trace id when tracing is on
 * (tracing.ts `rememberTraceId` put it on the request), absent otherwise.
 */
export function problemBody(req: Request, slug: AnyProblemSlug, detail: string, extensions: Record<string, unknown> = {}) {
  const info = problemInfo(slug);
  const traceId = (req as Request & { traceId?: string }).traceId;
  let type: string;
  try {
    type = problemTypeUri(slug as never);
  } catch {
    type = PROBLEM_BASE + slug;
  }
  return {
    ...extensions,
    type,
    title: info.title,
    status: info.status,
    detail,
    instance: req.originalUrl.split('?')[0] ?? req.path,
    request_id: requestIdOf(req),
    ...(traceId ? { trace_id: traceId } : {}),
  };
}

export function sendProblem(
  req: Request,
  res: Response,
  slug: AnyProblemSlug,
  detail: string,
  extensions: Record<string, unknown> = {},
): void {
  let body: Record<string, unknown> & { status: number } = problemBody(req, slug, detail, extensions);
  if (isSolanaPayPath(req.path)) {
    // Solana Pay 1.2 structured errors on the wallet-facing routes, in the same body (http/solana-pay-errors.ts)
    const retry = Number(res.getHeader('retry-after'));
    body = { ...body, ...solanaPayErrorFields(slug, body.status, detail, extensions, Number.isFinite(retry) && res.hasHeader('retry-after') ? retry : undefined) };
  }
  // explorer links of the signatures and mints it names (chain_transaction, needed[].mint), as on every answer
  const explorer = explorerOf(res);
  if (explorer) body = withExplorerLinks(body, explorer);
  res.status(body.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}

/** zod issues as problem field errors; `prefix` is body | query | params | headers. */
export function fieldErrors(prefix: string, err: ZodError | null | undefined): ProblemFieldError[] {
  if (!err) return [];
  return err.issues.map((issue) => {
    const keys = issue.code === 'unrecognized_keys' ? [] : issue.path;
    const path = [prefix, ...keys.map(String)].join('.');
    const message =
      issue.code === 'unrecognized_keys' ? `unknown field(s): ${issue.keys.join(', ')}` : issue.message;
    return { path, message, code: issue.code };
  });
}

export function validationProblemFrom(err: RequestValidationError): DomainError {
  const errors = [
    ...fieldErrors('params', err.pathParams),
    ...fieldErrors('headers', err.headers),
    ...fieldErrors('query', err.query),
    ...fieldErrors('body', err.body),
  ];
  const detail = errors.length
    ? errors.map((e) => `${e.path}: ${e.message}`).join('; ')
    : 'The request does not match the schema.';
  return new DomainError('validation-error', detail, { errors });
}

/** ts-rest `requestValidationErrorHandler`. */
export const requestValidationErrorHandler = (err: RequestValidationError, req: Request, res: Response) => {
  const e = validationProblemFrom(err);
  sendProblem(req, res, e.slug, e.detail, e.extensions);
};

/** 404 route-not-found, or 405 method-not-allowed with `Allow` when the path exists with other methods. */
export const routeNotFound: RequestHandler = (req, res) => {
  const allowed = allowedMethods(req.path);
  if (allowed.length > 0 && !allowed.includes(req.method)) {
    res.setHeader('Allow', allowed.join(', '));
    return sendProblem(req, res, 'method-not-allowed', `${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}.`);
  }
  sendProblem(req, res, 'route-not-found', `No route matches ${req.method} ${req.path}.`);
};

type BodyParserError = Error & { type?: string; status?: number; expose?: boolean; limit?: number; code?: string };

/**
 * A 503 for a database failure (db/errors.ts), or null when `err` is not one: `database-unavailable` when
 * the database cannot be reached (a failover, the server gone), `service-unavailable` otherwise.
 */
export function databaseProblem(err: unknown): { retryAfter: number; detail: string; slug: 'database-unavailable' | 'service-unavailable' } | null {
  const failure = classifyDbError(err);
  if (!failure) return null;
  const what = {
    unreachable: 'The database cannot be reached',
    timeout: 'A database statement or lock timed out',
    overloaded: 'The database is overloaded (no connection available)',
    conflict: 'A database transaction conflicted with another one',
  }[failure.reason];
  const slug = failure.reason === 'unreachable' ? 'database-unavailable' : 'service-unavailable';
  return { retryAfter: failure.retryAfterSeconds, detail: `${what}; retry in ${failure.retryAfterSeconds} s.`, slug };
}

export function errorHandler(log: Logger): ErrorRequestHandler {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) {
      log.error({ err, request_id: requestIdOf(req) }, 'error after the response started');
      res.end();
      return;
    }
    if (err instanceof DomainError) {
      if (err.status >= 500) log.warn({ err, request_id: requestIdOf(req), slug: err.slug }, err.detail);
      if (err.slug === 'chain-unavailable' && !res.getHeader('retry-after')) res.setHeader('Retry-After', '5');
      // when to come back: a domain rule (holds, cool-downs, daily caps, the daily chain budget) says when it ends
      const retry = err.retryAfterSeconds;
      if (retry !== undefined) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(retry))));
      return sendProblem(req, res, err.slug, err.detail, err.extensions);
    }
    if (err instanceof RequestValidationError) {
      const e = validationProblemFrom(err);
      return sendProblem(req, res, e.slug, e.detail, e.extensions);
    }
    if (err instanceof ChainActionLandedError) {
      const chain_transaction = err.landed;
      const db = databaseProblem(err.cause);
      const landed = `The ${err.landed.action} transaction landed on chain (signature ${err.landed.signature}); the order converges to it (the reconciler records it) and retrying the action returns the updated order.`;
      if (db) {
        log.warn({ err, request_id: requestIdOf(req), chain_transaction }, 'database unavailable after a chain action landed');
        res.setHeader('Retry-After', String(db.retryAfter));
        return sendProblem(req, res, db.slug, `${db.detail} ${landed}`, { chain_transaction });
      }
      log.error({ err, request_id: requestIdOf(req), chain_transaction }, 'recording a landed chain action failed');
      return sendProblem(req, res, 'internal-error', `An unexpected error occurred; quote request_id ${requestIdOf(req)}. ${landed}`, {
        chain_transaction,
      });
    }
    const db = databaseProblem(err);
    if (db) {
      log.warn({ err, request_id: requestIdOf(req) }, 'database unavailable');
      res.setHeader('Retry-After', String(db.retryAfter));
      return sendProblem(req, res, db.slug, db.detail);
    }
    if (err instanceof URIError || (err as BodyParserError)?.message?.startsWith('Failed to decode param')) {
      const name = undecodableParam(req.path);
      const path = name ? `params.${name}` : 'params';
      return sendProblem(req, res, 'malformed-request', `${path}: not valid percent-encoded UTF-8.`, {
        errors: [{ path, message: 'not valid percent-encoded UTF-8', code: 'invalid_encoding' }],
      });
    }
    const bp = err as BodyParserError;
    if (typeof bp?.code === 'string' && bp.code.startsWith('Z_')) {
      return sendProblem(
        req,
        res,
        'malformed-request',
        `The request body does not decode as Content-Encoding ${String(req.headers['content-encoding'] ?? '')} (${bp.message}).`,
      );
    }
    switch (bp?.type) {
      case 'entity.parse.failed':
        return sendProblem(req, res, 'malformed-json', 'The request body is not valid JSON.');
      case 'entity.too.large':
        return sendProblem(req, res, 'payload-too-large', `The request body exceeds ${bp.limit ?? 'the limit of'} bytes.`);
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return sendProblem(req, res, 'unsupported-media-type', bp.message);
      case 'request.aborted':
      case 'request.size.invalid':
        return sendProblem(req, res, 'malformed-request', `The request body is incomplete: ${bp.message}.`);
    }
    if (bp?.expose === true && bp.status === 400) {
      // any other client error body-parser / Express raised before a handler ran
      return sendProblem(req, res, 'malformed-request', bp.message);
    }
    log.error({ err, request_id: requestIdOf(req) }, 'unhandled error');
    return sendProblem(req, res, 'internal-error', `An unexpected error occurred; quote request_id ${requestIdOf(req)}.`);
  };
}

/** Whether the request carries a body (RFC 9112: Transfer-Encoding, or a Content-Length above 0). */
export const hasRequestBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/**
 * ts-rest global middleware (after authentication): a route that declares a request body requires one
 * (openapi.json marks it `required`). Without it body-parser leaves `{}`, which a schema of optional
 * fields would accept: 400 validation-error on `body` instead.
 */
export const requireDeclaredBody: RequestHandler = (req, res, next) => {
  const route = (req as Request & { tsRestRoute?: AppRoute }).tsRestRoute;
  if (!route || !declaresBody(route) || hasRequestBody(req)) return next();
  sendProblem(req, res, 'validation-error', 'body: a JSON request body is required.', {
    errors: [{ path: 'body', message: 'Required', code: 'invalid_type' }],
  });
};

/**
 * 413 at once when the declared Content-Length exceeds the body limit, closing the connection.
 * body-parser would reach the same 413 only after reading the whole announced body (to keep the
 * connection usable): a client announcing 10 MB and sending 10 bytes held the request open until the
 * request timeout.
 */
export function refuseOversizedBody(limitBytes: number): RequestHandler {
  return (req, res, next) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (!(declared > limitBytes)) return next();
    res.setHeader('Connection', 'close');
    sendProblem(req, res, 'payload-too-large', `The request body (${declared} bytes) exceeds ${limitBytes} bytes.`);
  };
}

/**
 * Longest request target (path and query, bytes) served: 8 KiB, what common proxies allow (nginx's
 * large_client_header_buffers line). Node's own limit is 16 kB for the request line and headers together
 * (431 from http/server.ts); between the two this answers 414.
 */
export const MAX_URL_BYTES = 8 * 1024;

/** 414 uri-too-long when the request target exceeds `maxBytes` (default MAX_URL_BYTES), before anything reads it. */
export function refuseLongUrl(maxBytes = MAX_URL_BYTES): RequestHandler {
  return (req, res, next) => {
    const bytes = Buffer.byteLength(req.originalUrl);
    if (bytes <= maxBytes) return next();
    sendProblem(req, res, 'uri-too-long', `The request target (${bytes} bytes) exceeds ${maxBytes} bytes; send fewer or shorter query values.`);
  };
}

/** 415 for request bodies that are not JSON (POST/PUT/PATCH with a body). */
export const requireJsonBody: RequestHandler = (req, res, next) => {
  if (!['POST', 'PUT', 'PATCH'].includes(req.method)) return next();
  if (!hasRequestBody(req)) return next();
  if (req.is(['application/json', 'application/*+json'])) return next();
  sendProblem(req, res, 'unsupported-media-type', `Request bodies must be application/json, got ${req.headers['content-type'] ?? 'none'}.`);
};
