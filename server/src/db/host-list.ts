/**
 * Follow the PostgreSQL primary across a failover: libpq multi-host connection URLs for node-postgres.
 *
 * node-postgres connects to ONE host. libpq (and so psql, pg_dump, every managed service's docs, and
 * pg_auto_failover's `pg_autoctl show uri --formation default`) accepts a host list and a required session
 * kind (PostgreSQL docs, "libpq: Connection Strings", 34.1.1.3 "Specifying Multiple Hosts" and the
 * `target_session_attrs` parameter):
 *
 *     postgres://user@10.0.0.1:5432,10.0.0.2:5432/bazaar?target_session_attrs=read-write
 *
 * libpq tries the hosts in order and keeps the first whose session is of the required kind. This module
 * gives node-postgres the same behaviour for the service's pools and its dedicated connections:
 *
 * - `parseHostListUrl(url)`: the host list and `target_session_attrs` of such a URL (null for a plain
 *   single-host URL without the parameter: those connect exactly as before);
 * - `HostList`: where the acceptable server is now. It remembers the host that last gave an acceptable
 *   session; when that host fails (a connection error, a refused connect, a read-only session), it is
 *   forgotten and the next connection probes every host at once (one throw-away connection each, bounded
 *   by `probeTimeoutMs`) and takes the first acceptable one in list order. One probe runs at a time;
 *   concurrent connects share it.
 * - `HostList.clientClass()`: a `pg.Client` subclass (for `pg.Pool`'s `Client` option, or `new` on its own)
 *   that connects to the current acceptable host and checks the session before it is used, as libpq does:
 *   `read-write` = `default_transaction_read_only` and `in_hot_standby` both `off` (the values
 *   PostgreSQL 14+ reports at connection start), else `SHOW transaction_read_only` = `off`; `primary` =
 *   `in_hot_standby` off, else `pg_is_in_recovery()` false; `any` = the first host that answers.
 *   A session of the wrong kind is closed and its connect fails with NoAcceptableHostError.
 *
 * Failures raised while no acceptable host is reachable are SQLSTATE 08001
 * (sqlclient_unable_to_establish_sqlconnection): db/errors.ts classifies them as `unreachable`, a 503
 * `database-unavailable` with Retry-After.
 *
 * `sslmode=prefer` and `sslmode=allow` (libpq: try TLS, fall back to plain) are dropped from the per-host
 * URL: node-postgres cannot fall back, and treats them as verify-full, which fails against a server
 * without TLS. Ask for TLS explicitly (`sslmode=require`/`verify-full`, plus `sslrootcert`) when you need it.
 */
import pg from 'pg';

/** One server of a host list. */
export interface HostPort {
  host: string;
  port: number;
}

/**
 * The session kinds supported (libpq `target_session_attrs`; `read-only` and `standby` are not).
 * `prefer-standby` (the standby reads client, db/read-routing.ts): a hot standby when one answers, else any
 * server that answers (libpq's second pass).
 */
export type TargetSessionAttrs = 'any' | 'read-write' | 'primary' | 'prefer-standby';

/** A parsed multi-host URL. */
export interface HostListUrl {
  hosts: HostPort[];
  targetSessionAttrs: TargetSessionAttrs;
  /** a single-host `postgres://` URL for `h` (same user, password, database and parameters) */
  urlFor(h: HostPort): string;
}

const DEFAULT_PORT = 5432;
const SESSION_ATTRS = new Set<string>(['any', 'read-write', 'primary', 'prefer-standby']);

/**
 * The hosts and `target_session_attrs` of a libpq-style `postgres://h1:p1,h2:p2/db?...` URL; null when the
 * URL names one host and no `target_session_attrs` (node-postgres connects to it as it always did).
 * Throws an Error naming the problem for an unsupported `target_session_attrs` or an empty host.
 */
export function parseHostListUrl(url: string): HostListUrl | null {
  const m = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?$/.exec(url);
  if (!m) return null;
  const [, scheme, userinfo, hostPart, path = '', query = ''] = m;
  const params = new URLSearchParams(query);
  const attrs = params.get('target_session_attrs');
  const many = hostPart!.includes(',');
  if (!many && attrs === null) return null;
  if (attrs !== null && !SESSION_ATTRS.has(attrs)) {
    throw new Error(`DATABASE_URL: target_session_attrs=${attrs} is not supported (use read-write, primary, prefer-standby or any)`);
  }
  params.delete('target_session_attrs');
  const sslmode = params.get('sslmode');
  if (sslmode === 'prefer' || sslmode === 'allow') params.delete('sslmode');
  const hosts = hostPart!.split(',').map((spec): HostPort => {
    const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(spec);
    const [host, port] = v6 ? [v6[1]!, v6[2]] : ((i) => (i < 0 ? [spec, undefined] : [spec.slice(0, i), spec.slice(i + 1)]))(spec.lastIndexOf(':'));
    if (!host) throw new Error(`DATABASE_URL: an empty host in the host list "${hostPart}"`);
    return { host: decodeURIComponent(host), port: port ? Number(port) : DEFAULT_PORT };
  });
  const rest = `${path}${params.size ? `?${params.toString()}` : ''}`;
  return {
    hosts,
    targetSessionAttrs: (attrs ?? 'any') as TargetSessionAttrs,
    urlFor: (h) => `${scheme}${userinfo !== undefined ? `${userinfo}@` : ''}${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}${rest}`,
  };
}

/** `host:port` of `h`. */
export const hostPortLabel = (h: HostPort) => `${h.host}:${h.port}`;

/**
 * No server of the host list gave a session of the required kind (all refused, timed out, or were
 * read-only / standbys). SQLSTATE 08001, as libpq's "could not make a read-write connection".
 */
export class NoAcceptableHostError extends Error {
  readonly code = '08001';
  readonly severity = 'ERROR';
  constructor(
    readonly targetSessionAttrs: TargetSessionAttrs,
    readonly tried: Array<{ host: string; outcome: string }>,
  ) {
    super(`no ${targetSessionAttrs} PostgreSQL session on any host: ${tried.map((t) => `${t.host} ${t.outcome}`).join('; ')}`);
    this.name = 'NoAcceptableHostError';
  }
}

type StatusMessage = { parameterName: string; parameterValue: string };

/** Record the ParameterStatus values the server reports while `client` connects (in_hot_standby, ...). */
function watchStatuses(client: pg.Client): Map<string, string> {
  const statuses = new Map<string, string>();
  const con = (client as unknown as { connection?: { on(ev: string, fn: (m: StatusMessage) => void): void } }).connection;
  con?.on('parameterStatus', (m) => statuses.set(m.parameterName, m.parameterValue));
  return statuses;
}

/** Whether the connected `client` is a session of kind `attrs` (libpq's checks; see the module comment). */
async function acceptable(client: pg.Client, statuses: Map<string, string>, attrs: TargetSessionAttrs): Promise<boolean> {
  // prefer-standby: the probe chose the host (a standby first); any session on it is kept
  if (attrs === 'any' || attrs === 'prefer-standby') return true;
  const hot = statuses.get('in_hot_standby');
  if (attrs === 'primary') {
    if (hot !== undefined) return hot === 'off';
    const r = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
    return r.rows[0]?.r === false;
  }
  const ro = statuses.get('default_transaction_read_only');
  if (hot !== undefined && ro !== undefined) return hot === 'off' && ro === 'off';
  const r = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
  return r.rows[0]?.transaction_read_only === 'off';
}

/** Whether the connected `client` is a hot standby (`in_hot_standby` on, else `pg_is_in_recovery()`). */
async function isHotStandby(client: pg.Client, statuses: Map<string, string>): Promise<boolean> {
  const hot = statuses.get('in_hot_standby');
  if (hot !== undefined) return hot === 'on';
  const r = await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
  return r.rows[0]?.r === true;
}

/**
 * `url` (a `postgres://` URL, single host or host list) with `target_session_attrs=prefer-standby`: the
 * connection of the standby reads client (db/read-routing.ts), on the same servers as `DATABASE_URL`.
 */
export function preferStandbyUrl(url: string): string {
  const m = /^([^?#]*)(?:\?([^#]*))?$/.exec(url)!;
  const params = new URLSearchParams(m[2] ?? '');
  params.set('target_session_attrs', 'prefer-standby');
  return `${m[1]}?${params.toString()}`;
}

export interface HostListOptions {
  /** how long one probe connection may take (connect + check), ms */
  probeTimeoutMs: number;
  /**
   * told when the acceptable host is first found or changes (`now`, `previous`: the last one found), and once
   * when a probe finds none (`now` null); for logs
   */
  onChange?: (now: HostPort | null, previous: HostPort | null) => void;
}

/** Where the acceptable (e.g. read-write) server of a host list is now; see the module comment. */
export class HostList {
  private current: HostPort | null = null;
  /** the last acceptable host found (kept through an outage: the next one found is a change from it) */
  private last: HostPort | null = null;
  /** a probe found no acceptable host, and none was found since (told once per outage) */
  private outage = false;
  private locating: Promise<HostPort> | null = null;
  /** acceptable hosts found by probing since start (the first one included) */
  switches = 0;

  constructor(
    readonly url: HostListUrl,
    private readonly o: HostListOptions,
  ) {}

  /** The host the last acceptable session was on (null until one was, or after it failed). */
  get primary(): HostPort | null {
    return this.current;
  }

  /** The host to connect to: the remembered one, else the first acceptable one a probe finds. */
  async target(): Promise<HostPort> {
    if (this.current) return this.current;
    this.locating ??= this.locate().finally(() => {
      this.locating = null;
    });
    return this.locating;
  }

  /** `h` failed (connection error, refused, wrong session kind): probe again before the next connect. */
  suspect(h: HostPort): void {
    if (this.current && this.current.host === h.host && this.current.port === h.port) this.current = null;
  }

  private async locate(): Promise<HostPort> {
    const { hosts, targetSessionAttrs } = this.url;
    const outcomes = await Promise.all(hosts.map((h) => this.probe(h)));
    let i = outcomes.findIndex((o) => o === 'acceptable');
    // prefer-standby: no standby answered, take the first server that did (libpq's second pass)
    if (i < 0 && targetSessionAttrs === 'prefer-standby') i = outcomes.findIndex((o) => o === 'not a standby');
    if (i < 0) {
      if (!this.outage) this.o.onChange?.(null, this.last);
      this.outage = true;
      throw new NoAcceptableHostError(
        targetSessionAttrs,
        hosts.map((h, k) => ({ host: hostPortLabel(h), outcome: outcomes[k]! })),
      );
    }
    const found = hosts[i]!;
    if (!this.last || this.last.host !== found.host || this.last.port !== found.port) {
      this.switches += 1;
      this.o.onChange?.(found, this.last);
    }
    this.current = found;
    this.last = found;
    this.outage = false;
    return found;
  }

  /** 'acceptable', or why not ("refused: ...", "read-only") */
  private async probe(h: HostPort): Promise<string> {
    const ms = this.o.probeTimeoutMs;
    const client = new pg.Client({
      connectionString: this.url.urlFor(h),
      connectionTimeoutMillis: ms,
      query_timeout: ms,
      application_name: 'bazaar-host-probe',
    });
    client.on('error', () => undefined);
    const statuses = watchStatuses(client);
    try {
      await client.connect();
      if (this.url.targetSessionAttrs === 'prefer-standby') return (await isHotStandby(client, statuses)) ? 'acceptable' : 'not a standby';
      return (await acceptable(client, statuses, this.url.targetSessionAttrs)) ? 'acceptable' : `not ${this.url.targetSessionAttrs}`;
    } catch (e) {
      return `failed (${(e as Error).message})`;
    } finally {
      void client.end().catch(() => undefined);
    }
  }

  /**
   * A `pg.Client` class whose connect() goes to `target()` and keeps the session only when it is of the
   * required kind (else it fails with NoAcceptableHostError and the host is suspected). A connection
   * error of a connected client suspects its host too. Use as `pg.Pool`'s `Client` option.
   */
  clientClass(): typeof pg.Client {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const list = this;
    class HostListClient extends pg.Client {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      override connect(callback?: any): any {
        const done = this.connectAcceptable();
        if (typeof callback === 'function') {
          done.then(
            () => callback(undefined),
            (e: unknown) => callback(e),
          );
          return undefined;
        }
        return done.then(() => undefined);
      }

      private async connectAcceptable(): Promise<void> {
        const target = await list.target();
        // the pool's connection timeout may have fired while the hosts were probed (it destroys the socket)
        if ((this as unknown as { connection?: { stream?: { destroyed?: boolean } } }).connection?.stream?.destroyed) {
          throw new Error('Connection terminated: the connection timeout expired while looking for the read-write server');
        }
        const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
        self.host = self.connectionParameters.host = target.host;
        self.port = self.connectionParameters.port = target.port;
        const statuses = watchStatuses(this);
        try {
          await super.connect();
        } catch (e) {
          list.suspect(target);
          throw e;
        }
        let ok = false;
        try {
          ok = await acceptable(this, statuses, list.url.targetSessionAttrs);
        } catch (e) {
          list.suspect(target);
          await this.end().catch(() => undefined);
          throw e;
        }
        if (!ok) {
          list.suspect(target);
          await this.end().catch(() => undefined);
          throw new NoAcceptableHostError(list.url.targetSessionAttrs, [{ host: hostPortLabel(target), outcome: `not ${list.url.targetSessionAttrs}` }]);
        }
        this.on('error', () => list.suspect(target));
      }
    }
    return HostListClient;
  }
}

/** how long one probe of a host may take while looking for the acceptable server, ms */
export const HOST_PROBE_TIMEOUT_MS = 3_000;

const registry = new Map<string, HostList | null>();

/**
 * The process's one HostList for `url` (shared by every pool and dedicated connection of the service, so
 * one failure seen anywhere sends them all to the new server), or null for a plain single-host URL.
 * `onChange` of the first caller is kept.
 */
export function hostListFor(url: string, onChange?: HostListOptions['onChange']): HostList | null {
  if (!registry.has(url)) {
    const parsed = parseHostListUrl(url);
    registry.set(url, parsed ? new HostList(parsed, { probeTimeoutMs: HOST_PROBE_TIMEOUT_MS, onChange }) : null);
  }
  return registry.get(url)!;
}

/**
 * node-postgres options for `url` plus `extra`: for a host-list URL the `Client` class that follows the
 * acceptable server (and a single-host connection string node-postgres can parse); else `url` as it is.
 */
export function pgConnectionOptions<T extends pg.ClientConfig>(url: string, extra: T = {} as T): T & { connectionString: string; Client?: typeof pg.Client } {
  const list = hostListFor(url);
  if (!list) return { ...extra, connectionString: url };
  return { ...extra, connectionString: list.url.urlFor(list.url.hosts[0]!), Client: list.clientClass() };
}

/** A dedicated `pg.Client` for `url` (LISTEN, probes): it follows the acceptable server of a host-list URL. */
export function newPgClient(url: string, extra: Omit<pg.ClientConfig, 'connectionString'> = {}): pg.Client {
  const { Client, ...config } = pgConnectionOptions(url, extra);
  return new (Client ?? pg.Client)(config);
}

/**
 * Whether `err` (from connecting) says the server it went to is gone or of the wrong kind, so that another
 * attempt (which probes the host list again) may succeed: NoAcceptableHostError, a refused / reset / timed-out
 * socket, a connection ended during start-up, 57P03 (the database system is starting up / shutting down).
 */
export function isHostFailure(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (e instanceof NoAcceptableHostError) return true;
  const code = typeof e.code === 'string' ? e.code : '';
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'EPIPE'].includes(code) || code.startsWith('57P')) return true;
  return typeof e.message === 'string' && /Connection terminated|timeout expired/i.test(e.message);
}

/**
 * A connected dedicated `pg.Client` for `url` (see newPgClient). With a host list, a connect that fails
 * because the remembered server is gone or became a standby is tried again once, after a fresh probe,
 * as libpq moves on to the next host.
 */
export async function connectPgClient(url: string, extra: Omit<pg.ClientConfig, 'connectionString'> = {}): Promise<pg.Client> {
  const list = hostListFor(url);
  for (let attempt = 0; ; attempt++) {
    const client = newPgClient(url, extra);
    client.on('error', () => undefined);
    try {
      await client.connect();
      client.removeAllListeners('error');
      return client;
    } catch (e) {
      if (!list || attempt >= 1 || !isHostFailure(e)) throw e;
    }
  }
}
