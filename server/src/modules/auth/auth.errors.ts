import { DomainError } from '../../errors.js';

/** Auth errors in the contract's problem vocabulary. `detail` names the failed check. */
export const authErrors = {
  loginFailed: (check: string) => new DomainError('login-failed', `Login failed: ${check}.`, { check: check.replace(/ /g, '_') }),
  unauthorized: () =>
    new DomainError('unauthorized', 'No credential was sent (Authorization: Bearer, X-API-Key or the bazaar_session cookie).'),
  invalidToken: (why: string) => new DomainError('invalid-token', `The credential is not valid: ${why}.`),
  tokenExpired: () => new DomainError('token-expired', 'The access token has expired; log in again.'),
  adminOnly: () => new DomainError('forbidden', 'This route is for administrators.'),
};
