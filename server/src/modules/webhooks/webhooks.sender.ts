/**
 * One webhook HTTP attempt: POST the event JSON, signed per Standard Webhooks v1 with the
 * `standardwebhooks` package (webhook-id = the event id, webhook-timestamp = now in unix seconds,
 * webhook-signature = `v1,<base64 HMAC-SHA256>`), over a socket whose DNS lookup refuses non-public
 * addresses (ssrf.ts). The receiver has `timeoutMs` for the whole exchange; its body is read up to
 * MAX_RESPONSE_BYTES, then the connection is cut (a 2xx still counts). Never throws: the outcome says
 * what happened.
 */
import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { guardedLookup, urlProblem } from './ssrf.js';

/**
 * Keep-alive agents shared by every attempt (a receiver gets its deliveries over a few reused
 * connections). The SSRF check runs in `lookup` when a socket connects; a reused socket was checked
 * when it connected.
 */
const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }), https: new https.Agent({ keepAlive: true, maxSockets: 64 }) };

/** Response bytes read at most (the rest is discarded, the socket destroyed). */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** Response bytes kept in the delivery log. */
export const LOGGED_RESPONSE_BYTES = 1024;

export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  body: string;
}

export interface SendInput {
  url: string;
  /** `whsec_<base64>` */
  secret: string;
  eventId: string;
  /** the JSON body, exactly as signed */
  payload: string;
  timeoutMs: number;
  allowPrivate: boolean;
  now?: () => Date;
}

/** The Standard Webhooks headers for one attempt. */
export function signedHeaders(secret: string, eventId: string, payload: string, at: Date): Record<string, string> {
  const signature = new Webhook(secret).sign(eventId, at, payload);
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

export function sendWebhook(i: SendInput): Promise<AttemptOutcome> {
  const started = Date.now();
  const done = (o: Omit<AttemptOutcome, 'durationMs'>): AttemptOutcome => ({ ...o, durationMs: Date.now() - started });
  const bad = urlProblem(i.url);
  if (bad) return Promise.resolve(done({ ok: false, statusCode: null, error: bad.detail, body: '' }));
  const u = new URL(i.url);
  const lib = u.protocol === 'https:' ? https : http;
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Bazaar-Webhooks/1',
    ...signedHeaders(i.secret, i.eventId, i.payload, (i.now ?? (() => new Date()))()),
  };
  return new Promise((resolve) => {
    let settled = false;
    const finish = (o: Omit<AttemptOutcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(o));
    };
    const req = lib.request(
      u,
      { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(i.payload) }, lookup: guardedLookup(i.allowPrivate) as never, agent: u.protocol === 'https:' ? agents.https : agents.http },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const status = res.statusCode ?? 0;
        const complete = () => {
          const body = Buffer.concat(chunks).toString('utf8').slice(0, LOGGED_RESPONSE_BYTES);
          const ok = status >= 200 && status < 300;
          finish({ ok, statusCode: status, error: ok ? null : `receiver answered ${status}`, body });
          if (size >= MAX_RESPONSE_BYTES) req.destroy(); // cut a receiver that sends too much; else the socket is reused
        };
        res.on('data', (c: Buffer) => {
          if (size < MAX_RESPONSE_BYTES) chunks.push(c.subarray(0, MAX_RESPONSE_BYTES - size));
          size += c.length;
          if (size >= MAX_RESPONSE_BYTES) complete();
        });
        res.on('end', complete);
        res.on('error', complete);
      },
    );
    const timer = setTimeout(() => {
      finish({ ok: false, statusCode: null, error: `no answer within ${i.timeoutMs} ms`, body: '' });
      req.destroy();
    }, i.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, statusCode: null, error: `${err.code ?? 'error'}: ${err.message}`.slice(0, 500), body: '' }));
    req.end(i.payload);
  });
}
