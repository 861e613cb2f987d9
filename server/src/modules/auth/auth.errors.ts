import type { LoginFailureReason, OperatorRole } from '@bazaar/contract';
import { DomainError } from '../../errors.js';

/** Auth errors in the contract's problem vocabulary. */
export const authErrors = {
  /** 401 login-failed; `reason` names the SIWS field (contract loginFailureReasons), `detail` says why */
  loginFailed: (reason: LoginFailureReason, why: string) => new DomainError('login-failed', `Login failed: ${why}.`, { reason }),
  /** 400 validation-error on one request_login field (`path` like "body.domain") */
  field: (path: string, code: string, message: string) =>
    new DomainError('validation-error', `${path.replace(/^body\./, '')}: ${message}.`, { errors: [{ path, message, code }] }),
  unauthorized: () =>
    new DomainError('unauthorized', 'No credential was sent (Authorization: Bearer, X-API-Key or the bazaar_session cookie).'),
  invalidToken: (why: string) => new DomainError('invalid-token', `The credential is not valid: ${why}.`),
  tokenExpired: () => new DomainError('token-expired', 'The access token has expired; log in again.'),
  /**
   * 403 forbidden on an operator route: the caller does not hold `role` now (`role` member names it). `token`:
   * the caller is a personal access token (its operator scope works only while its owner holds the role).
   */
  roleRequired: (role: OperatorRole, token = false) =>
    new DomainError(
      'forbidden',
      token
        ? `This route needs the ${role} role, which the owner of this personal access token does not hold.`
        : `This route needs the ${role} role.`,
      { required_role: role },
    ),
  /**
   * 403 insufficient-scope: a personal access token without a scope the request needs (`required_scope`;
   * null: no token may call the route). `capability`: the money capability (contract MONEY_CAPABILITIES)
   * that needs it, when the missing scope is a money scope the route's own scope does not give.
   */
  insufficientScope: (required: string | null, capability?: string) =>
    required
      ? new DomainError(
          'insufficient-scope',
          capability
            ? `This personal access token lacks the scope ${required}, which ${capability} needs: this request moves the user's money.`
            : `This personal access token lacks the scope ${required}.`,
          { required_scope: required, ...(capability ? { capability } : {}) },
        )
      : new DomainError('insufficient-scope', 'Personal access tokens cannot call this route; use a login session.', { required_scope: null }),
};
