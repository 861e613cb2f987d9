/** ts-rest handlers of `contract.auth`: SIWS login and logout. Rules in modules/auth. */
import { initServer } from '@ts-rest/express';
import { contract, SESSION_COOKIE_NAME } from '@bazaar/contract';
import type { AuthService } from '../modules/auth/index.js';

export interface AuthHttpDeps {
  service: AuthService;
  /** cookie gets `Secure` when the public origin is https */
  secureCookie: boolean;
}

export function authHandlers(deps: AuthHttpDeps) {
  const s = initServer();
  return s.router(contract.auth, {
    requestLogin: async ({ body }) => ({ status: 200 as const, body: await deps.service.requestLogin(body) }),
    verifyLogin: async ({ body, res }) => {
      const out = await deps.service.verifyLogin(body);
      if (body.set_cookie) {
        res.cookie(SESSION_COOKIE_NAME, out.access_token, {
          httpOnly: true,
          secure: deps.secureCookie,
          sameSite: 'strict',
          path: '/',
          maxAge: out.expires_in * 1000,
        });
      }
      res.setHeader('Cache-Control', 'no-store');
      return { status: 200 as const, body: out };
    },
    logout: async ({ req, res }) => {
      const out = await deps.service.logout(req.principal!);
      res.clearCookie(SESSION_COOKIE_NAME, { httpOnly: true, secure: deps.secureCookie, sameSite: 'strict', path: '/' });
      res.setHeader('Cache-Control', 'no-store');
      return { status: 200 as const, body: { logged_out: true as const, ...out } };
    },
  });
}
