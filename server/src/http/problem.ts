/**
 * The one place where errors become RFC 9457 problem details (`application/problem+json`):
 * {type, title, status, detail, instance, request_id, ...extensions}.
 *
 * - DomainError(slug, detail, extensions)             -> the slug's status (contract problems table)
 * - ts-rest RequestValidationError                     -> 400 validation-error, errors: [{path, message, code}]
 * - body-parser: invalid JSON / too large / charset   -> 400 malformed-json / 413 payload-too-large / 415
 * - no route                                           -> 404 route-not-found
 * - anything else                                      -> 500 internal-error (logged; no stack or message leaks)
 */
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { RequestValidationError } from '@ts-rest/express';
import { PROBLEM_CONTENT_TYPE, problemTypeUri, type ProblemFieldError } from '@bazaar/contract';
import type { ZodError } from 'zod';
import { DomainError, problemInfo, type AnyProblemSlug } from '../errors.js';
import type { Logger } from '../logger.js';

const PROBLEM_BASE = 'https://bazaar.dev/problems/';

export function requestIdOf(req: Request): string {
  return (req as Request & { id?: string }).id ?? String(req.headers['x-request-id'] ?? '');
}

export function problemBody(req: Request, slug: AnyProblemSlug, detail: string, extensions: Record<string, unknown> = {}) {
  const info = problemInfo(slug);
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
  };
}

export function sendProblem(
  req: Request,
  res: Response,
  slug: AnyProblemSlug,
  detail: string,
  extensions: Record<string, unknown> = {},
): void {
  const body = problemBody(req, slug, detail, extensions);
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

export const routeNotFound: RequestHandler = (req, res) => {
  sendProblem(req, res, 'route-not-found', `No route matches ${req.method} ${req.path}.`);
};

type BodyParserError = Error & { type?: string; status?: number; expose?: boolean; limit?: number };

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
      return sendProblem(req, res, err.slug, err.detail, err.extensions);
    }
    if (err instanceof RequestValidationError) {
      const e = validationProblemFrom(err);
      return sendProblem(req, res, e.slug, e.detail, e.extensions);
    }
    const bp = err as BodyParserError;
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
      case 'stream.encoding.set':
        return sendProblem(req, res, 'validation-error', bp.message, { errors: [] });
    }
    log.error({ err, request_id: requestIdOf(req) }, 'unhandled error');
    return sendProblem(req, res, 'internal-error', `An unexpected error occurred; quote request_id ${requestIdOf(req)}.`);
  };
}

/** 415 for request bodies that are not JSON (POST/PUT/PATCH with a body). */
export const requireJsonBody: RequestHandler = (req, res, next) => {
  if (!['POST', 'PUT', 'PATCH'].includes(req.method)) return next();
  const length = Number(req.headers['content-length'] ?? 0);
  const hasBody = length > 0 || req.headers['transfer-encoding'] !== undefined;
  if (!hasBody) return next();
  if (req.is(['application/json', 'application/*+json'])) return next();
  sendProblem(req, res, 'unsupported-media-type', `Request bodies must be application/json, got ${req.headers['content-type'] ?? 'none'}.`);
};
