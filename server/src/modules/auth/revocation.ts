/**
 * In-process revocation signal (issue 20): revoking a credential on this process emits its key
 * (auth.service `credentialKey`: `pat:<id>`, `api_key:<id>`) so long-lived uses of it (the SSE streams
 * of this process, the webhook worker) re-check at once instead of at their next timer. Revocations on
 * other replicas (or by the API key CLI) are not signalled here: they are in the database, and those
 * users re-check it periodically (EVENTS_STREAM_RECHECK_SECONDS; the webhook worker on every pass).
 */
import { EventEmitter } from 'node:events';

/** Emits `'changed'` with a credential key after a revocation committed on this process. */
export const credentialSignal = new EventEmitter();
credentialSignal.setMaxListeners(0);

/** Announce that `key`'s credential changed (call after the revocation committed). */
export function notifyCredentialChanged(key: string): void {
  credentialSignal.emit('changed', key);
}
