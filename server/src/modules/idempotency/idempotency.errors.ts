import { DomainError } from '../../errors.js';

/** Problem slugs from contract/src/problems.ts: 400, 400, 422, 409. */
export const idempotencyErrors = {
  missing: () => new DomainError('idempotency-key-missing', 'This operation requires an Idempotency-Key header.'),
  invalid: () =>
    new DomainError('validation-error', 'Idempotency-Key must be 1..255 printable ASCII characters.', {
      errors: [{ path: 'headers.idempotency-key', message: 'must be 1..255 printable ASCII characters', code: 'invalid_string' }],
    }),
  mismatch: () =>
    new DomainError(
      'idempotency-key-reused',
      'This Idempotency-Key was already used with a different request (method, path, body or caller).',
    ),
  inUse: () =>
    new DomainError('idempotency-key-in-use', 'A request with this Idempotency-Key is still being processed; retry later.'),
};
