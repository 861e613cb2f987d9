/**
 * Text the service cannot store, refused once for every route (issue 20 item 14): before any handler,
 * rate limiter or hash reads the request, every string of the JSON body (values and member names), of
 * the query string and of the path parameters is checked, whatever the route's schema says.
 *
 * Refused, 400 `validation-error` whose `errors` names the first offending field (`body.title`,
 * `body.resources.0`, `query.q`, `params.wallet`):
 * - `invalid_text_nul`: a NUL character (U+0000). PostgreSQL `text` cannot hold it (error 22021, which
 *   answered 500), nor can a C string in the token metadata.
 * - `invalid_text_surrogate`: an unpaired UTF-16 surrogate (a lone high or low surrogate, or a pair in the
 *   wrong order, e.g. the JSON escape `"\ud800"`): it is no Unicode scalar value, has no UTF-8 encoding,
 *   and PostgreSQL and the Token-2022 metadata (Borsh UTF-8 strings) cannot store it (ECMAScript
 *   `String.prototype.isWellFormed`, Unicode 15 §3.9 D76).
 * - `invalid_text_bidi` (issue 23 item 4): a bidirectional embedding, override or isolate control
 *   (U+202A..U+202E, U+2066..U+2069; contract BIDI_CONTROLS). Storable, but it reorders how a title,
 *   name, description or message displays: "Invoice <RLO>fdp.exe" shows as "Invoice exe.pdf" (UTS #55,
 *   CVE-2021-42574 "Trojan Source"). No field of the API needs them; refused everywhere rather than
 *   stripped, so what is stored is what was sent. The implicit marks LRM, RLM (U+200E, U+200F) and ALM
 *   (U+061C) stay allowed: right-to-left text needs them next to neutral characters, and they cannot
 *   reverse a run.
 *
 * And a body nested deeper than MAX_JSON_DEPTH (32) levels is refused the same way (`too_deep`), before
 * anything that walks it recursively (the Idempotency-Key fingerprint, zod) runs. The walk itself is
 * iterative: no nesting can overflow its stack.
 */
import type { Request, RequestHandler } from 'express';
import { BIDI_CONTROLS, type ProblemFieldError } from '@bazaar/contract';
import { sendProblem } from './problem.js';

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one (UTF-16 code units). */
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string is refused (cannot be stored, or would display spoofed), or null when it is accepted. */
export function unstorableText(s: string): 'invalid_text_nul' | 'invalid_text_surrogate' | 'invalid_text_bidi' | null {
  if (s.includes('\u0000')) return 'invalid_text_nul';
  if (UNPAIRED_SURROGATE.test(s)) return 'invalid_text_surrogate';
  if (BIDI_CONTROLS.test(s)) return 'invalid_text_bidi';
  return null;
}

const MESSAGES = {
  invalid_text_nul: 'must not contain the NUL character (U+0000)',
  invalid_text_surrogate: 'must be well-formed Unicode text (no unpaired UTF-16 surrogate)',
  invalid_text_bidi:
    'must not contain bidirectional embedding, override or isolate controls (U+202A..U+202E, U+2066..U+2069): they reorder how the text displays',
} as const;

/**
 * How deeply a JSON request body may nest (objects and arrays; the top-level value is depth 1). The
 * contract's deepest body nests 3 levels; a body nested 10,000 levels overflowed the stack of the
 * Idempotency-Key fingerprint (a recursive canonical JSON) and answered 500 (issue 21 item 8).
 */
export const MAX_JSON_DEPTH = 32;

/**
 * The first problem in `value` (any JSON value, walked depth-first in document order, member names
 * included), as a field error whose path starts with `prefix`: a string that cannot be stored
 * (`invalid_text_nul`, `invalid_text_surrogate`), or an object or array nested deeper than `maxDepth`
 * (`too_deep`, path of the first container past the limit, cut to its first 10 segments); null when none.
 */
export function findUnstorableText(value: unknown, prefix: string, maxDepth = MAX_JSON_DEPTH): ProblemFieldError | null {
  const stack: Array<[unknown, string, number]> = [[value, prefix, 1]];
  while (stack.length) {
    const [v, path, depth] = stack.pop()!;
    if (typeof v === 'string') {
      const code = unstorableText(v);
      if (code) return { path, message: MESSAGES[code], code };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth > maxDepth) {
      const cut = path.split('.').slice(0, 10).join('.');
      return { path: cut, message: `nested deeper than ${maxDepth} levels of objects and arrays`, code: 'too_deep' };
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}.${i}`, depth + 1]);
    } else {
      const entries = Object.entries(v as Record<string, unknown>);
      for (const [k] of entries) {
        const code = unstorableText(k);
        if (code) return { path: `${path}.${JSON.stringify(k).slice(1, 41)}`, message: `member name ${MESSAGES[code]}`, code };
      }
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], `${path}.${entries[i]![0]}`, depth + 1]);
    }
  }
  return null;
}

function refuse(req: Request, res: Parameters<RequestHandler>[1], error: ProblemFieldError): void {
  sendProblem(req, res, 'validation-error', `${error.path}: ${error.message}.`, { errors: [error] });
}

/**
 * Middleware after the JSON body parser: 400 when the body or the query string holds text that cannot
 * be stored, or the body nests too deeply (see the module comment).
 */
export const refuseUnstorableText: RequestHandler = (req, res, next) => {
  const error = findUnstorableText(req.body, 'body') ?? findUnstorableText(req.query, 'query');
  if (error) return refuse(req, res, error);
  next();
};

/** ts-rest global middleware (the route is matched, `req.params` decoded): the same for path parameters. */
export const refuseUnstorableParams: RequestHandler = (req, res, next) => {
  const error = findUnstorableText(req.params, 'params');
  if (error) return refuse(req, res, error);
  next();
};
