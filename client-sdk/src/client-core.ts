/**
 * What both client entry points share (`@bazaar/client-sdk` and `@bazaar/client-sdk/lite`): the options,
 * the fetcher, the client's types and the error helpers. Nothing here loads the contract's zod schemas at
 * run time (types only), so the lite entry point bundles without them.
 */
import { initClient, type ApiFetcher, type AppRouter, type InitClientReturn } from '@bazaar/contract/ts-rest';
import type { Contract, Problem } from '@bazaar/contract';

export interface BazaarClientOptions {
  /** Origin of the service, e.g. "http://localhost:3000" (the contract adds /api/v1). */
  baseUrl: string;
  /** JWT from verify_login, sent as `Authorization: Bearer <token>`. */
  token?: string | null;
  /** API key for server-to-server use, sent as `X-API-Key`. */
  apiKey?: string | null;
  /** fetch implementation (defaults to globalThis.fetch). */
  fetch?: typeof globalThis.fetch;
  /** Validate 2xx response bodies against the contract schemas (default false; `@bazaar/client-sdk` only). */
  validateResponse?: boolean;
  /** Send cookies (e.g. the bazaar_session cookie) from browsers: fetch `credentials`. */
  credentials?: 'omit' | 'same-origin' | 'include';
}

/** A fetcher with the behaviour of ts-rest's default one, over any fetch implementation. */
function fetcherFor(fetchImpl: typeof globalThis.fetch): ApiFetcher {
  return async ({ route, path, method, headers, body, validateResponse, fetchOptions }) => {
    const result = await fetchImpl(path, { ...fetchOptions, method, headers, body: body ?? undefined });
    const contentType = result.headers.get('content-type') ?? '';
    let responseBody: unknown;
    if (contentType.includes('application/') && contentType.includes('json')) {
      responseBody = await result.json();
      const schema = route.responses[result.status];
      if (validateResponse && result.ok && schema && typeof (schema as { parse?: unknown }).parse === 'function') {
        responseBody = (schema as { parse(v: unknown): unknown }).parse(responseBody);
      }
    } else if (contentType.includes('text/')) {
      responseBody = await result.text();
    } else {
      const text = await result.text();
      responseBody = text.length ? text : undefined;
    }
    return { status: result.status, body: responseBody, headers: result.headers };
  };
}

/** The ts-rest client arguments the SDK passes (the client's types depend on their shape). */
interface SdkClientArgs {
  baseUrl: string;
  baseHeaders: { authorization: () => string; 'x-api-key': () => string };
  api: ApiFetcher;
  validateResponse: boolean;
  credentials?: 'omit' | 'same-origin' | 'include';
}

/**
 * The typed API: one method per contract route, grouped like the contract (`auth`, `users`, `listings`,
 * `marketplace`, `orders`, `reviews`, `wallet`, `tips`, ...); each resolves to `{ status, body, headers }` with `body`
 * typed by `status` (2xx: the resource; 4xx/5xx: a `Problem`).
 */
export type BazaarApi = InitClientReturn<Contract, SdkClientArgs>;

export type BazaarClient = BazaarApi & {
  /** Set (or clear with null) the bearer token used by every later call. */
  setToken(token: string | null): void;
  /** The current bearer token, if any. */
  getToken(): string | null;
  /** Set (or clear) the X-API-Key credential. */
  setApiKey(apiKey: string | null): void;
  /** The options the client was built with (baseUrl etc.). */
  readonly options: Readonly<BazaarClientOptions>;
};

/**
 * The client over `router`: the contract itself (`@bazaar/client-sdk`) or its route table of methods and
 * paths (`@bazaar/client-sdk/lite`). ts-rest's client reads only a route's `method`, `path`, `contentType`
 * and, to validate a response, `responses`; the request's zod schemas are never read on the client.
 */
export function createClientOver(router: AppRouter, options: BazaarClientOptions): BazaarClient {
  const state = { token: options.token ?? null, apiKey: options.apiKey ?? null };
  const args: SdkClientArgs = {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    baseHeaders: {
      // ts-rest drops headers whose value is undefined
      authorization: () => (state.token ? `Bearer ${state.token}` : (undefined as unknown as string)),
      'x-api-key': () => (state.apiKey ?? (undefined as unknown as string)),
    },
    api: fetcherFor(options.fetch ?? ((...a) => globalThis.fetch(...a))),
    validateResponse: options.validateResponse ?? false,
    ...(options.credentials ? { credentials: options.credentials } : {}),
  };
  const api = initClient(router, args) as unknown as BazaarApi;
  return Object.assign(api, {
    setToken(token: string | null) {
      state.token = token;
    },
    getToken() {
      return state.token;
    },
    setApiKey(apiKey: string | null) {
      state.apiKey = apiKey;
    },
    options: Object.freeze({ ...options }),
  });
}

/** Thrown by SDK helpers when the API answers with an error status. */
export class BazaarApiError extends Error {
  readonly status: number;
  readonly problem: Problem | null;
  constructor(status: number, body: unknown, context: string) {
    const problem = isProblem(body) ? body : null;
    super(`${context}: HTTP ${status}${problem ? ` ${problem.title}: ${problem.detail}` : ''}`);
    this.name = 'BazaarApiError';
    this.status = status;
    this.problem = problem;
  }
}

/** Whether a response body is an RFC 9457 problem document of this API. */
export function isProblem(body: unknown): body is Problem {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as Problem).type === 'string' &&
    typeof (body as Problem).status === 'number' &&
    typeof (body as Problem).title === 'string'
  );
}

/** A fresh Idempotency-Key value (UUID v4). */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}
