/**
 * The one domain error of the service. Services, repositories and the chain adapter throw
 * `DomainError(slug, detail, extensions?)`; http/problem.ts maps it to an RFC 9457
 * `application/problem+json` response in one place.
 *
 * `slug` is a problem slug from the contract (contract/src/problems.ts `problemTypes`), or one of
 * the server-only slugs below (not part of the contract: never a documented outcome of a route).
 * `extensions` are extra members of the problem body (e.g. `errors` for validation failures).
 */
import { problemTypes, type ProblemSlug } from '@bazaar/contract';

/** Problem types that exist only in the server (the contract does not list them). */
export const serverProblemTypes = {
  'not-implemented': { status: 501, title: 'Not implemented', description: 'This route is not implemented yet.' },
  'service-unavailable': {
    status: 503,
    title: 'Service unavailable',
    description: 'A dependency (database or chain) is not ready.',
  },
} as const;

export type ServerProblemSlug = keyof typeof serverProblemTypes;
export type AnyProblemSlug = ProblemSlug | ServerProblemSlug;

export function problemInfo(slug: AnyProblemSlug): { status: number; title: string } {
  return (problemTypes as Record<string, { status: number; title: string }>)[slug] ??
    (serverProblemTypes as Record<string, { status: number; title: string }>)[slug] ??
    problemTypes['internal-error'];
}

export class DomainError extends Error {
  readonly slug: AnyProblemSlug;
  readonly detail: string;
  readonly extensions: Record<string, unknown>;
  /** HTTP status of the slug (from the problems table). */
  readonly status: number;

  constructor(slug: AnyProblemSlug, detail: string, extensions: Record<string, unknown> = {}) {
    super(detail);
    this.name = 'DomainError';
    this.slug = slug;
    this.detail = detail;
    this.extensions = extensions;
    this.status = problemInfo(slug).status;
  }
}

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;
