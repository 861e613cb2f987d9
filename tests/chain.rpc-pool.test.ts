/**
 * chain/rpc-pool.ts (issue 27 item 5) against scripted in-process providers (the pool's transport is
 * replaced; no network): which provider a request goes to, health transitions (out on a failed check, a
 * slot lag or an error rate; back only after `recoverAfter` good checks), stale answers refused and
 * asked elsewhere, a hanging provider skipped after the attempt timeout, a transaction sent to one
 * provider and confirmed through another (the same signature, executed once), the websocket endpoint
 * following the selection, and SOLANA_RPC_URLS / SOLANA_WS_URLS in the configuration.
 */
import { describe, expect, it } from 'vitest';
import bs58 from 'bs58';
import { Connection, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { RpcPool, type FetchLike } from '../server/src/chain/rpc-pool.js';
import { sendRawAndConfirm } from '../server/src/chain/tx.js';
import { translateChainError } from '../server/src/chain/errors.js';
import { loadConfig } from '../server/src/config.js';
import { createMetrics, registerRpcProviderGauges } from '../server/src/metrics.js';

type Mode = 'ok' | 'refuse' | 'hang' | 'stale' | 'http503' | 'behind' | 'unhealthy';

/** The cluster the fake providers front: one slot, one set of executed signatures. */
interface Cluster {
  slot: number;
  executed: Map<string, number>;
}

interface FakeProvider {
  url: string;
  mode: Mode;
  /** methods refused (connection refused) whatever the mode */
  refuse: Set<string>;
  /** methods refused once (the next call of the method is answered) */
  refuseOnce: Set<string>;
  /** the slot a stale provider is stuck at */
  frozenSlot: number;
  /** answers this late (ms), abortable */
  delayMs: number;
  /** runs just before an answer is returned (tests move their fake clock with it) */
  onAnswer?: () => void;
  calls: Record<string, number>;
}

function setup(n = 2, opts: Partial<ConstructorParameters<typeof RpcPool>[0]> = {}) {
  const cluster: Cluster = { slot: 1_000, executed: new Map() };
  const providers: FakeProvider[] = Array.from({ length: n }, (_, i) => ({
    url: `http://rpc-${String.fromCharCode(97 + i)}.test:8899/key-${i}`,
    mode: 'ok' as Mode,
    refuse: new Set<string>(),
    refuseOnce: new Set<string>(),
    frozenSlot: 0,
    delayMs: 0,
    calls: {},
  }));
  const answer = (p: FakeProvider, m: { id: unknown; method: string; params: unknown[] }) => {
    const slot = p.mode === 'stale' ? p.frozenSlot : cluster.slot;
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id: m.id, result });
    switch (m.method) {
      case 'getHealth':
        return p.mode === 'unhealthy' ? { jsonrpc: '2.0', id: m.id, error: { code: -32005, message: 'Node is unhealthy' } } : ok('ok');
      case 'getSlot':
        return ok(slot);
      case 'getBlockHeight':
        return ok(slot);
      case 'getAccountInfo':
        return ok({ context: { slot }, value: null });
      case 'sendTransaction': {
        const raw = Buffer.from(String(m.params[0]), 'base64');
        const sig = bs58.encode(raw.subarray(1, 65));
        cluster.executed.set(sig, (cluster.executed.get(sig) ?? 0) + 1);
        return ok(sig);
      }
      case 'getSignatureStatuses': {
        const sigs = m.params[0] as string[];
        const seen = p.mode !== 'stale';
        return ok({
          context: { slot },
          value: sigs.map((s) => (seen && cluster.executed.has(s) ? { slot: cluster.slot, confirmations: null, err: null, confirmationStatus: 'finalized' } : null)),
        });
      }
      default:
        return { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } };
    }
  };
  const transport: FetchLike = async (url, init) => {
    const p = providers.find((x) => x.url === url);
    if (!p) throw new Error(`unknown provider ${url}`);
    const body = JSON.parse(String(init.body)) as { id: unknown; method: string; params: unknown[] };
    p.calls[body.method] = (p.calls[body.method] ?? 0) + 1;
    if (p.mode === 'refuse' || p.refuse.has(body.method) || p.refuseOnce.delete(body.method)) {
      throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    }
    if (p.mode === 'hang') {
      return new Promise<Response>((_, reject) => {
        const s = init.signal;
        if (s?.aborted) return reject(s.reason);
        s?.addEventListener('abort', () => reject(s.reason), { once: true });
      });
    }
    if (p.delayMs) {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, p.delayMs);
        init.signal?.addEventListener('abort', () => (clearTimeout(t), reject(init.signal!.reason)), { once: true });
      });
    }
    if (p.mode === 'http503') return new Response('overloaded', { status: 503 });
    if (p.mode === 'behind' && body.method !== 'getHealth' && body.method !== 'getSlot') {
      return Response.json({ jsonrpc: '2.0', id: body.id, error: { code: -32005, message: 'Node is behind by 42 slots' } });
    }
    p.onAnswer?.();
    return Response.json(answer(p, body));
  };
  const log = { info: () => undefined, warn: () => undefined };
  const pool = new RpcPool({
    providers: providers.map((p, i) => ({ url: p.url, wsUrl: `ws://rpc-${String.fromCharCode(97 + i)}.test:8900` })),
    fetch: transport,
    attemptTimeoutMs: 50,
    requestTimeoutMs: 5_000,
    log,
    ...opts,
  });
  const connection = new Connection(providers[0]!.url, { commitment: 'confirmed', disableRetryOnRateLimit: true, fetch: pool.fetch as never });
  return { cluster, providers, pool, connection, a: providers[0]!, b: providers[1]! };
}

const selected = (pool: RpcPool) => pool.status().find((s) => s.selected)!.label;

describe('RpcPool: which provider answers', () => {
  it('the first healthy provider in preference order answers; the others are not asked', async () => {
    const { pool, connection, a, b } = setup();
    await pool.checkNow();
    await connection.getAccountInfo(Keypair.generate().publicKey);
    expect(a.calls.getAccountInfo).toBe(1);
    expect(b.calls.getAccountInfo).toBeUndefined();
    expect(selected(pool)).toBe('rpc-a.test:8899');
  });

  it('a refused connection: the same request is answered by the next provider', async () => {
    const { connection, a, b } = setup();
    a.mode = 'refuse';
    const info = await connection.getAccountInfoAndContext(Keypair.generate().publicKey);
    expect(info.value).toBeNull();
    expect(a.calls.getAccountInfo).toBe(1);
    expect(b.calls.getAccountInfo).toBe(1);
  });

  it('a provider that accepts and never answers is skipped after the attempt timeout', async () => {
    const { connection, a, b } = setup();
    a.mode = 'hang';
    await connection.getAccountInfo(Keypair.generate().publicKey);
    expect(a.calls.getAccountInfo).toBe(1);
    expect(b.calls.getAccountInfo).toBe(1);
  });

  it('HTTP 503 and a JSON-RPC "node is behind" answer are failures (asked elsewhere); another JSON-RPC error is an answer', async () => {
    const { connection, a, b } = setup();
    a.mode = 'http503';
    await connection.getAccountInfo(Keypair.generate().publicKey);
    expect(b.calls.getAccountInfo).toBe(1);
    a.mode = 'behind';
    await connection.getAccountInfo(Keypair.generate().publicKey);
    expect(b.calls.getAccountInfo).toBe(2);
    a.mode = 'ok';
    // "Method not found" is the provider's answer: returned, not retried on the next one
    await expect(connection.getInflationRate()).rejects.toThrow(/Method not found/);
    expect(b.calls.getInflationRate).toBeUndefined();
  });

  it('the last healthy provider gets the whole request time: a slow one is waited for, not cut off for a provider known to be failing', async () => {
    const { pool, connection, a, b } = setup(); // attempt timeout 50 ms
    a.mode = 'refuse';
    await pool.checkNow(); // a out
    b.delayMs = 150;
    await connection.getAccountInfo(Keypair.generate().publicKey);
    expect(b.calls.getAccountInfo).toBe(1);
    expect(a.calls.getAccountInfo).toBeUndefined();
  });

  it('no provider answers (refused, or hanging past the request time): the service reads it as chain-unavailable (503, retried), not a failed transaction', async () => {
    const refused = setup();
    refused.a.mode = 'refuse';
    refused.b.mode = 'refuse';
    const e1 = await refused.connection.getLatestBlockhash().catch((e: unknown) => e);
    expect((translateChainError(e1) as unknown as { slug: string }).slug).toBe('chain-unavailable');
    const hung = setup(2, { requestTimeoutMs: 120 });
    hung.a.mode = 'hang';
    hung.b.mode = 'hang';
    const e2 = await hung.connection.getLatestBlockhash().catch((e: unknown) => e);
    expect((translateChainError(e2) as unknown as { slug: string }).slug).toBe('chain-unavailable');
  });

  it('every provider down: the request fails (web3.js reports a network error) instead of hanging', async () => {
    const { connection, a, b } = setup();
    a.mode = 'refuse';
    b.mode = 'refuse';
    await expect(connection.getSlot()).rejects.toThrow(/fetch failed|ECONNREFUSED/);
  });
});

describe('RpcPool: health transitions', () => {
  it('a failed health check takes the provider out; it comes back only after recoverAfter consecutive good checks', async () => {
    const { pool, a, connection, b } = setup(2, { recoverAfter: 3 });
    await pool.checkNow();
    expect(pool.status().map((s) => s.healthy)).toEqual([true, true]);
    a.mode = 'refuse';
    await pool.checkNow();
    expect(pool.status()[0]).toMatchObject({ healthy: false, selected: false });
    expect(pool.status()[0]!.reason).toMatch(/getHealth|getSlot/);
    expect(selected(pool)).toBe('rpc-b.test:8899');
    // reads go straight to b now
    await connection.getAccountInfo(Keypair.generate().publicKey);
    expect(a.calls.getAccountInfo).toBeUndefined();
    expect(b.calls.getAccountInfo).toBe(1);
    a.mode = 'ok';
    await pool.checkNow();
    await pool.checkNow();
    expect(pool.status()[0]!.healthy).toBe(false); // two good checks: not yet
    await pool.checkNow();
    expect(pool.status()[0]).toMatchObject({ healthy: true, selected: true, reason: null });
  });

  it('every provider out: the selection stays on the provider selected last (it does not flap back to the preferred one, which is down)', async () => {
    const { pool, a, b, connection } = setup();
    a.mode = 'refuse';
    await pool.checkNow();
    expect(selected(pool)).toBe('rpc-b.test:8899');
    b.mode = 'unhealthy';
    await pool.checkNow();
    expect(pool.status().map((s) => s.healthy)).toEqual([false, false]);
    expect(selected(pool)).toBe('rpc-b.test:8899');
    expect(pool.wsEndpoint()!.current()).toBe('ws://rpc-b.test:8900');
    // requests still try every provider, the selected one first
    b.mode = 'ok';
    await connection.getAccountInfo(Keypair.generate().publicKey);
    expect(b.calls.getAccountInfo).toBe(1);
    expect(a.calls.getAccountInfo).toBeUndefined();
  });

  it('the error rate never takes out the last healthy provider', async () => {
    const { pool, a, b, connection } = setup(2, { errorMinCount: 5, errorRateOut: 0.5 });
    a.mode = 'refuse';
    await pool.checkNow();
    b.refuse.add('getAccountInfo');
    for (let i = 0; i < 6; i++) await connection.getAccountInfo(Keypair.generate().publicKey).catch(() => undefined);
    expect(pool.status()[1]).toMatchObject({ healthy: true, selected: true });
  });

  it('a provider that leaves its check unanswered while the other answers is out on that one check; a round where every check timed out takes nobody out (the service itself is slow)', async () => {
    const { pool, a, b } = setup(2, { healthTimeoutMs: 30 });
    await pool.checkNow();
    a.mode = 'hang';
    b.mode = 'hang';
    await pool.checkNow();
    await pool.checkNow();
    expect(pool.status().map((s) => s.healthy)).toEqual([true, true]);
    b.mode = 'ok';
    await pool.checkNow();
    expect(pool.status()[0]).toMatchObject({ healthy: false, reason: 'getHealth: timed out', selected: false });
    expect(selected(pool)).toBe('rpc-b.test:8899');
  });

  it('a standby provider (not selected: nothing waits on it) is out on its second unanswered check in a row, not its first', async () => {
    const { pool, b } = setup(2, { healthTimeoutMs: 30 });
    await pool.checkNow();
    b.mode = 'hang';
    await pool.checkNow();
    expect(pool.status()[1]!.healthy).toBe(true); // briefly slow: keeps its place
    await pool.checkNow();
    expect(pool.status()[1]).toMatchObject({ healthy: false, reason: 'getHealth: timed out' });
    expect(selected(pool)).toBe('rpc-a.test:8899');
  });

  it('a timeout never takes out the last healthy provider, even while the other (out, stale) answers at once', async () => {
    const { pool, a, b, cluster } = setup(2, { healthTimeoutMs: 30, maxSlotLag: 10 });
    await pool.checkNow();
    a.mode = 'stale';
    a.frozenSlot = cluster.slot - 50;
    await pool.checkNow();
    expect(pool.status()[0]!.healthy).toBe(false);
    b.mode = 'hang';
    await pool.checkNow();
    await pool.checkNow();
    expect(pool.status()[1]).toMatchObject({ healthy: true, selected: true });
  });

  it('the last healthy provider whose connection fails once (reset, refused) is asked again before the one known to be failing', async () => {
    const { pool, a, b, connection } = setup(2, { healthTimeoutMs: 30 });
    await pool.checkNow();
    a.mode = 'hang';
    await pool.checkNow(); // a out (hung)
    b.refuseOnce.add('getAccountInfo');
    const r = await connection.getAccountInfoAndContext(Keypair.generate().publicKey);
    expect(r.value).toBeNull();
    expect(b.calls.getAccountInfo).toBe(2);
    expect(a.calls.getAccountInfo).toBeUndefined();
  });

  it('an answer the service read late (its event loop was blocked) does not make the provider that timed out beside it hung', async () => {
    let now = 0;
    const { pool, a, b } = setup(2, { healthTimeoutMs: 30, now: () => now });
    await pool.checkNow();
    now += 100;
    a.mode = 'hang';
    b.onAnswer = () => (now += 5_000); // b's answer is read 5 s after its check started
    await pool.checkNow();
    expect(pool.status().map((s) => s.healthy)).toEqual([true, true]);
  });

  it('a provider slow to answer but within healthTimeoutMs stays in and selected, check after check (no flapping)', async () => {
    const { pool, a } = setup(2, { healthTimeoutMs: 1_000 });
    a.delayMs = 150;
    for (let i = 0; i < 4; i++) {
      await pool.checkNow();
      expect(pool.status()[0]).toMatchObject({ healthy: true, selected: true });
    }
  });

  it('the health ticks do not wait for a hanging check: the others are checked every interval meanwhile, the hanging one is not asked again until its check ends', async () => {
    const { pool, a, b } = setup(2, { healthIntervalMs: 10, healthTimeoutMs: 60_000 });
    a.mode = 'hang';
    pool.start();
    await expect.poll(() => b.calls.getHealth ?? 0, { timeout: 5_000, interval: 10 }).toBeGreaterThanOrEqual(5);
    expect(a.calls.getHealth).toBe(1);
    await pool.stop(); // aborts the hanging check: a shutdown does not wait for it
  });

  it('a request waiting on a provider that is taken out goes to the next provider then, not after its attempt timeout', async () => {
    const { pool, a, b, connection } = setup(2, { healthTimeoutMs: 30, attemptTimeoutMs: 60_000 });
    await pool.checkNow();
    a.mode = 'hang';
    const read = connection.getAccountInfoAndContext(Keypair.generate().publicKey);
    await expect.poll(() => a.calls.getAccountInfo ?? 0).toBe(1);
    await pool.checkNow(); // a's check unanswered while b answers: a out
    expect(pool.status()[0]!.healthy).toBe(false);
    const r = await read;
    expect(r.value).toBeNull();
    expect(b.calls.getAccountInfo).toBe(1);
  });

  it('every provider out: the one selected last is asked first and given the whole request time', async () => {
    const { pool, a, b, connection } = setup(); // attempt timeout 50 ms
    a.mode = 'refuse';
    await pool.checkNow();
    b.mode = 'unhealthy';
    await pool.checkNow();
    b.mode = 'ok';
    b.delayMs = 150;
    await connection.getAccountInfo(Keypair.generate().publicKey);
    expect(b.calls.getAccountInfo).toBe(1);
    expect(a.calls.getAccountInfo).toBeUndefined();
  });

  it('getHealth answering "unhealthy" takes the provider out', async () => {
    const { pool, a } = setup();
    a.mode = 'unhealthy';
    await pool.checkNow();
    expect(pool.status()[0]).toMatchObject({ healthy: false });
    expect(pool.status()[0]!.reason).toMatch(/Node is unhealthy/);
  });

  it('slot lag against the others past maxSlotLag takes the provider out (its getHealth still says ok)', async () => {
    const { pool, a, cluster } = setup(2, { maxSlotLag: 10 });
    await pool.checkNow();
    a.mode = 'stale';
    a.frozenSlot = cluster.slot;
    cluster.slot += 10;
    await pool.checkNow();
    expect(pool.status()[0]!.healthy).toBe(true); // 10 behind: within the allowed lag
    cluster.slot += 1;
    await pool.checkNow();
    expect(pool.status()[0]).toMatchObject({ healthy: false, reason: 'stale: 11 slots behind', slot: a.frozenSlot });
  });

  it('a provider whose slot stands still while another provider moves 2 slots past it is out after staleAfterMs, long before the lag reaches maxSlotLag', async () => {
    let now = 0;
    const { pool, a, cluster } = setup(2, { maxSlotLag: 10, staleAfterMs: 1_000, now: () => now });
    await pool.checkNow();
    a.mode = 'stale';
    a.frozenSlot = cluster.slot;
    cluster.slot += 2;
    now += 500;
    await pool.checkNow();
    expect(pool.status()[0]).toMatchObject({ healthy: true, selected: true }); // 2 slots behind for 500 ms: not yet
    cluster.slot += 1;
    now += 500;
    await pool.checkNow();
    expect(pool.status()[0]).toMatchObject({ healthy: false, selected: false });
    // judged on its own answer (b's slot of the previous check) or on b's newer one, whichever came first
    expect(pool.status()[0]!.reason).toMatch(/^stale: slot 1000 for 1000 ms while another provider reached 100[23]$/);
    expect(pool.wsEndpoint()!.current()).toBe('ws://rpc-b.test:8900');
  });

  it('a provider whose checks time out is not called stuck: only its answers can show its slot standing still', async () => {
    let now = 0;
    const { pool, a, b, cluster } = setup(2, { healthTimeoutMs: 30, staleAfterMs: 1_000, now: () => now });
    await pool.checkNow();
    now += 100;
    a.mode = 'hang';
    b.onAnswer = () => (now += 1_000); // the service reads b's answers late (busy): nobody is hung either
    for (let i = 0; i < 3; i++) {
      cluster.slot += 2;
      await pool.checkNow();
    }
    expect(pool.status()[0]).toMatchObject({ healthy: true, selected: true });
  });

  it('the whole cluster stops: nobody is stale however long it stands (nor a provider one slot behind the others), and a provider behind but advancing stays in', async () => {
    let now = 0;
    const { pool, a, cluster } = setup(2, { maxSlotLag: 10, staleAfterMs: 1_000, now: () => now });
    await pool.checkNow();
    a.mode = 'stale';
    a.frozenSlot = cluster.slot;
    cluster.slot += 1; // a one slot behind; then the cluster halts
    for (let i = 0; i < 10; i++) {
      now += 500;
      await pool.checkNow();
    }
    expect(pool.status().map((s) => s.healthy)).toEqual([true, true]);
    // the cluster moves again, a follows 3 slots behind
    for (let i = 0; i < 10; i++) {
      cluster.slot += 1;
      a.frozenSlot = cluster.slot - 3;
      now += 400;
      await pool.checkNow();
    }
    expect(pool.status()[0]).toMatchObject({ healthy: true, selected: true });
  });

  it('an error rate over the window takes the provider out even while its health checks pass', async () => {
    const { pool, a, connection } = setup(2, { errorMinCount: 5, errorRateOut: 0.5 });
    await pool.checkNow();
    a.refuse.add('getAccountInfo');
    for (let i = 0; i < 4; i++) await connection.getAccountInfo(Keypair.generate().publicKey);
    expect(pool.status()[0]!.healthy).toBe(true);
    await connection.getAccountInfo(Keypair.generate().publicKey);
    expect(pool.status()[0]).toMatchObject({ healthy: false });
    expect(pool.status()[0]!.reason).toMatch(/error rate: 5 of the last 5/);
  });

  it('the health loop runs on its own once started, and stops', async () => {
    const { pool, a } = setup(2, { healthIntervalMs: 10 });
    pool.start();
    a.mode = 'refuse';
    await expect.poll(() => pool.status()[0]!.healthy, { timeout: 5_000, interval: 10 }).toBe(false);
    await pool.stop();
    const calls = a.calls.getHealth;
    await pool.checkNow(); // still callable by hand; the loop itself is gone
    expect(a.calls.getHealth).toBe(calls! + 1);
  });
});

describe('RpcPool: stale answers are not trusted', () => {
  it('an answer whose context slot lags the known slot is refused, asked elsewhere, and takes its provider out', async () => {
    const { pool, a, b, cluster, connection } = setup(2, { maxSlotLag: 10 });
    await pool.checkNow(); // reference slot 1000 from both
    a.mode = 'stale';
    a.frozenSlot = cluster.slot - 50;
    const r = await connection.getAccountInfoAndContext(Keypair.generate().publicKey);
    expect(r.context.slot).toBe(cluster.slot);
    expect(a.calls.getAccountInfo).toBe(1);
    expect(b.calls.getAccountInfo).toBe(1);
    expect(pool.status()[0]).toMatchObject({ healthy: false });
    expect(pool.status()[0]!.reason).toMatch(/stale: answered at slot 950, 50 behind/);
  });

  it('"did it land?": a provider a few slots behind (within the lag) that has not seen the transaction is not believed; a current one says it landed', async () => {
    const { pool, a, b, cluster, connection } = setup(2, { maxSlotLag: 10 });
    a.mode = 'stale';
    a.frozenSlot = cluster.slot;
    cluster.slot += 5;
    cluster.executed.set('5'.repeat(88), 1); // landed after a fell behind
    await pool.checkNow(); // a 5 slots behind: still healthy and selected for other reads
    expect(pool.status()[0]).toMatchObject({ healthy: true, selected: true });
    const st = await connection.getSignatureStatuses(['5'.repeat(88)]);
    expect(st.value[0]).toMatchObject({ confirmationStatus: 'finalized' });
    expect(a.calls.getSignatureStatuses).toBe(1);
    expect(b.calls.getSignatureStatuses).toBe(1);
    expect(pool.status()[0]!.healthy).toBe(true);
  });

  it('a finalized read may trail the tip by the finalization depth without being called stale', async () => {
    const { pool, a, b, cluster, connection } = setup(2, { maxSlotLag: 10 });
    await pool.checkNow();
    a.mode = 'stale';
    a.frozenSlot = cluster.slot - 40; // a root 40 slots back
    await connection.getAccountInfo(Keypair.generate().publicKey, 'finalized');
    expect(a.calls.getAccountInfo).toBe(1);
    expect(b.calls.getAccountInfo).toBeUndefined();
  });

  it('every provider stale: the request fails rather than answering from an old view', async () => {
    const { pool, a, b, cluster, connection } = setup(2, { maxSlotLag: 10 });
    await pool.checkNow();
    for (const p of [a, b]) {
      p.mode = 'stale';
      p.frozenSlot = cluster.slot - 100;
    }
    await expect(connection.getAccountInfo(Keypair.generate().publicKey)).rejects.toThrow(/stale/);
  });
});

describe('RpcPool: send once, confirm anywhere', () => {
  function signedTransfer() {
    const payer = Keypair.generate();
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash: bs58.encode(Buffer.alloc(32, 7)), lastValidBlockHeight: 10_000 });
    tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }));
    tx.sign(payer);
    return { raw: tx.serialize(), signature: bs58.encode(tx.signature!) };
  }

  it('sent to the selected provider only; confirmed through the other after the first went down; executed once', async () => {
    const { pool, a, b, cluster, connection } = setup();
    await pool.checkNow();
    const { raw, signature } = signedTransfer();
    const recorded: string[] = [];
    a.refuse.add('getSignatureStatuses'); // a goes away right after accepting the transaction
    const r = await sendRawAndConfirm(connection, raw, {
      preflight: false,
      resendIntervalMs: 60_000,
      onSigned: (sig) => void recorded.push(sig),
    });
    expect(recorded).toEqual([signature]);
    expect(r.signature).toBe(signature);
    expect(a.calls.sendTransaction).toBe(1);
    expect(b.calls.sendTransaction).toBeUndefined(); // never broadcast
    expect(b.calls.getSignatureStatuses).toBeGreaterThanOrEqual(1);
    expect(cluster.executed.get(signature)).toBe(1);
  });

  it('the preferred provider refuses the send: the SAME signed bytes go to the next one (the recorded signature lands)', async () => {
    const { pool, a, b, cluster, connection } = setup();
    await pool.checkNow();
    a.mode = 'refuse';
    const { raw, signature } = signedTransfer();
    const recorded: string[] = [];
    const r = await sendRawAndConfirm(connection, raw, { preflight: false, resendIntervalMs: 60_000, onSigned: (sig) => void recorded.push(sig) });
    expect(r.signature).toBe(signature);
    expect(recorded).toEqual([signature]);
    expect(a.calls.sendTransaction).toBe(1);
    expect(b.calls.sendTransaction).toBe(1);
    expect([...cluster.executed.keys()]).toEqual([signature]);
  });
});

describe('RpcPool: the websocket endpoint follows the selection', () => {
  it('current() is the selected provider\'s websocket; onSwitch fires when the selection changes', async () => {
    const { pool, a } = setup();
    const ws = pool.wsEndpoint()!;
    expect(ws.current()).toBe('ws://rpc-a.test:8900');
    let switches = 0;
    const off = ws.onSwitch(() => (switches += 1));
    a.mode = 'refuse';
    await pool.checkNow();
    expect(ws.current()).toBe('ws://rpc-b.test:8900');
    expect(switches).toBe(1);
    off();
  });

  it('metrics labels never carry the URL path (API keys)', () => {
    const { pool } = setup();
    expect(pool.status().map((s) => s.label)).toEqual(['rpc-a.test:8899', 'rpc-b.test:8899']);
  });
});

describe('RpcPool: metrics', () => {
  it('bazaar_rpc_provider_up / _selected / _slot per provider host follow the health checks', async () => {
    const { pool, a } = setup();
    const metrics = createMetrics();
    registerRpcProviderGauges(metrics, () => pool.status());
    await pool.checkNow();
    let text = await metrics.scrape();
    expect(text).toContain('bazaar_rpc_provider_up{provider="rpc-a.test:8899"} 1');
    expect(text).toContain('bazaar_rpc_provider_selected{provider="rpc-a.test:8899"} 1');
    expect(text).toContain('bazaar_rpc_provider_selected{provider="rpc-b.test:8899"} 0');
    expect(text).toContain('bazaar_rpc_provider_slot{provider="rpc-b.test:8899"} 1000');
    expect(text).not.toContain('key-0');
    a.mode = 'refuse';
    await pool.checkNow();
    text = await metrics.scrape();
    expect(text).toContain('bazaar_rpc_provider_up{provider="rpc-a.test:8899"} 0');
    expect(text).toContain('bazaar_rpc_provider_selected{provider="rpc-b.test:8899"} 1');
  });
});

describe('configuration: SOLANA_RPC_URLS / SOLANA_WS_URLS', () => {
  const base = { DATA_DIR: '/tmp/bazaar-rpc-pool-config', JWT_SECRET: 'x'.repeat(40) };
  it('several providers in order; the first is also the one-provider URL; websockets derived or listed', () => {
    const c = loadConfig({ ...base, SOLANA_RPC_URLS: 'https://a.example/k1, https://b.example:8899/k2' });
    expect(c.solanaRpcUrls).toEqual(['https://a.example/k1', 'https://b.example:8899/k2']);
    expect(c.solanaRpcUrl).toBe('https://a.example/k1');
    expect(c.solanaWsUrls).toBeUndefined(); // derived per provider by the chain client
    const w = loadConfig({ ...base, SOLANA_RPC_URLS: 'https://a.example,https://b.example', SOLANA_WS_URLS: 'wss://a.example/ws,wss://b.example/ws' });
    expect(w.solanaWsUrls).toEqual(['wss://a.example/ws', 'wss://b.example/ws']);
    expect(loadConfig({ ...base, SOLANA_RPC_URLS: 'https://a.example,https://b.example', SOLANA_WS_URLS: 'off' }).solanaWsUrls).toBeNull();
    expect(c.rpcPool).toEqual({ healthIntervalMs: 500, maxSlotLag: 10, attemptTimeoutMs: 2_000 });
  });

  it('refuses a bad list: not http(s), duplicates, a different SOLANA_RPC_URL beside it, a websocket count that does not match', () => {
    expect(() => loadConfig({ ...base, SOLANA_RPC_URLS: 'ftp://a.example' })).toThrow(/SOLANA_RPC_URLS/);
    expect(() => loadConfig({ ...base, SOLANA_RPC_URLS: 'https://a.example,https://a.example' })).toThrow(/same URL twice/);
    expect(() => loadConfig({ ...base, SOLANA_RPC_URLS: 'https://a.example', SOLANA_RPC_URL: 'https://b.example' })).toThrow(/not both/);
    expect(() => loadConfig({ ...base, SOLANA_RPC_URLS: 'https://a.example,https://b.example', SOLANA_WS_URLS: 'wss://a.example' })).toThrow(/one websocket per/);
    expect(() => loadConfig({ ...base, SOLANA_WS_URLS: 'wss://a.example' })).toThrow(/goes with SOLANA_RPC_URLS/);
  });
});
