/**
 * Who is doing this, and in answer to which request: one `AsyncLocalStorage` (Node's async context) holding
 * `{ requestId, actor }` for the code that runs on behalf of an HTTP request or of a background loop, so that
 * a record written deep in a module (the audit log, modules/audit) names its author without every function
 * taking one more parameter.
 *
 * Who sets it:
 * - app.ts, first middleware: `runWithRequest(req.id)` for every request (actor null until authenticated);
 * - the auth middleware (http/security.ts), once the principal is known: `enterActor(req, actorOf(principal))`,
 *   which also re-enters the request's context for the rest of the chain (a body parser or another
 *   callback-based step may have run the chain outside it);
 * - background loops (lib/poller.ts `actor` option, and the start-up passes in composition.ts / the modules'
 *   `start()`): `withSystemActor(name, fn)`: actor `{ type: 'system', id: name }`, no request id.
 *
 * Reading: `currentRequestContext()` (undefined outside any), `currentActor()` (the `unattributed` system actor
 * outside any: a script or a test calling a repository directly).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Kinds of actors: a signed-in user (session), an API key, a personal access token, or the service itself. */
export type ActorType = 'user' | 'api_key' | 'pat' | 'system';

/**
 * Who acts. `id`: the user's id (type user), the API key's id (api_key), the token's id (pat), or the loop's
 * name for `system` (e.g. `payment-watcher`, `reconciler`, `auto-release`, `custody-worker`). `userId`: the
 * user a credential acts for (an API key with a user, a token; the user herself for type user); null for a
 * service key and the system. `roles`: the operator roles the actor held (filled once users carry roles).
 */
export interface Actor {
  type: ActorType;
  id: string;
  userId?: string | null;
  roles?: readonly string[];
}

/** The context of one request or one background pass. Mutable: the auth middleware sets `actor`. */
export interface RequestContext {
  /** the request's id (X-Request-Id, problem `request_id`); null for background work */
  requestId: string | null;
  /** null until the request is authenticated (and for anonymous requests) */
  actor: Actor | null;
  /** the HTTP method of the request (absent for background work): db/read-routing.ts sends only GET/HEAD to a standby */
  method?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** The actor of code that runs outside any request or loop (a script, a test calling a repo directly). */
export const UNATTRIBUTED: Actor = Object.freeze({ type: 'system', id: 'unattributed', userId: null });

/** The context of the code running now; undefined outside a request or a loop. */
export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}

/** The actor of the code running now: the request's authenticated actor, the loop's, else `UNATTRIBUTED`. */
export function currentActor(): Actor {
  return storage.getStore()?.actor ?? UNATTRIBUTED;
}

/** Run `fn` (and everything it starts asynchronously) in the context `ctx`. */
export function runWithContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

/**
 * Run `fn` as the system actor `name` (a background loop's pass), with no request id. Everything `fn` starts
 * asynchronously (awaits, timers, transactions) sees this actor, whatever context the caller had: a pass
 * triggered from a request handler still belongs to the loop.
 */
export function withSystemActor<T>(name: string, fn: () => T): T {
  return storage.run({ requestId: null, actor: { type: 'system', id: name, userId: null } }, fn);
}
