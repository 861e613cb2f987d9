/**
 * The localnet's dispatch table (programs/localnet/src/chain/methods.rs: method name -> handler) holds
 * every JSON-RPC method the server calls, and a name it does not hold answers -32601.
 *
 * "The methods the server calls" is read from the server's source, not listed here: every web3.js
 * `Connection` method called on a connection (`connection.x(` / `conn.x(`), every @solana/spl-token
 * helper given the connection (`getMint(this.connection, ...)`), and every Anchor account read
 * (`program.account.<name>.fetchNullable(`). Each one is then called once on the live localnet through a
 * connection whose fetch records the JSON-RPC methods it sends; a server call with no sample below fails
 * the test (add one), so a new call cannot slip past it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnchorProvider, Program, type Idl } from '@coral-xyz/anchor';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, TransactionMessage } from '@solana/web3.js';
import * as splToken from '@solana/spl-token';
import type { Escrow } from '../programs/escrow/idl/escrow';
import { startLocalnet, type Localnet } from './helpers/localnet';

const repo = resolve(fileURLToPath(new URL('..', import.meta.url)));
const idl = JSON.parse(readFileSync(join(repo, 'programs/escrow/idl/escrow.json'), 'utf8')) as Idl;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'generated' ? [] : sources(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** What the server calls that reaches the RPC node, by kind (from its source). */
function serverCalls() {
  const text = sources(join(repo, 'server/src'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  const connection = new Set([...text.matchAll(/\b(?:connection|conn)\s*\.\s*([A-Za-z]\w*)\s*\(/g)].map((m) => m[1]));
  const spl = new Set(
    [...text.matchAll(/\b([A-Za-z]\w*)\(\s*(?:\w+\.)?connection\b/g)]
      .map((m) => m[1])
      .filter((name) => typeof (splToken as Record<string, unknown>)[name] === 'function'),
  );
  const anchor = new Set([...text.matchAll(/\.account\.\w+\.(fetch\w*|all)\(/g)].map((m) => m[1]));
  return { connection, spl, anchor };
}

/** Method names of the dispatch table, as the Rust source lists them. */
function dispatchTable(): string[] {
  const src = readFileSync(join(repo, 'programs/localnet/src/chain/methods.rs'), 'utf8');
  return [...src.matchAll(/^\s*\("([A-Za-z_]+)", handler!\(/gm)].map((m) => m[1]);
}

async function raw(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

let net: Localnet;
/** JSON-RPC method -> error codes its answers carried (none: every answer was a result) */
const sent = new Map<string, number[]>();
/** JSON-RPC requests sent through the recording connection */
let requests = 0;
let conn: Connection;
const payer = Keypair.generate();
let signature = '';

beforeAll(async () => {
  net = await startLocalnet();
  const recording = async (input: string, init: RequestInit) => {
    const res = await fetch(input, init);
    const calls = [JSON.parse(String(init.body))].flat() as { method: string }[];
    const answers = [await res.clone().json()].flat() as { error?: { code: number } }[];
    calls.forEach((r, i) => {
      requests += 1;
      const codes = sent.get(r.method) ?? [];
      if (answers[i]?.error) codes.push(answers[i].error!.code);
      sent.set(r.method, codes);
    });
    return res;
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  conn = new Connection(net.rpcUrl, { commitment: 'confirmed', fetch: recording as any });
  const plain = new Connection(net.rpcUrl, 'confirmed');
  const sig = await plain.requestAirdrop(payer.publicKey, LAMPORTS_PER_SOL);
  await plain.confirmTransaction({ signature: sig, ...(await plain.getLatestBlockhash()) });
  signature = sig;
}, 900_000);

afterAll(async () => {
  await net?.stop();
});

/** One call of each server call, on the recording connection (its result does not matter here). */
const samples: Record<string, () => Promise<unknown>> = {
  getAccountInfo: () => conn.getAccountInfo(payer.publicKey),
  getMultipleAccountsInfo: () => conn.getMultipleAccountsInfo([payer.publicKey, Keypair.generate().publicKey]),
  getBalance: () => conn.getBalance(payer.publicKey),
  getLatestBlockhash: () => conn.getLatestBlockhash(),
  getBlockHeight: () => conn.getBlockHeight(),
  getSlot: () => conn.getSlot(),
  getGenesisHash: () => conn.getGenesisHash(),
  isBlockhashValid: async () => conn.isBlockhashValid((await conn.getLatestBlockhash()).blockhash),
  getMinimumBalanceForRentExemption: () => conn.getMinimumBalanceForRentExemption(165),
  getFeeForMessage: async () =>
    conn.getFeeForMessage(
      new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: (await conn.getLatestBlockhash()).blockhash,
        instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 })],
      }).compileToV0Message(),
    ),
  getSignatureStatuses: () => conn.getSignatureStatuses([signature], { searchTransactionHistory: true }),
  getSignaturesForAddress: () => conn.getSignaturesForAddress(payer.publicKey, { limit: 10 }),
  getTransaction: () => conn.getTransaction(signature, { maxSupportedTransactionVersion: 0 }),
  getProgramAccounts: () => conn.getProgramAccounts(new PublicKey(idl.address), { filters: [{ dataSize: 237 }] }),
  getParsedTokenAccountsByOwner: () => conn.getParsedTokenAccountsByOwner(payer.publicKey, { programId: splToken.TOKEN_PROGRAM_ID }),
  sendRawTransaction: async () => {
    const tx = new Transaction({ feePayer: payer.publicKey, ...(await conn.getLatestBlockhash()) }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: LAMPORTS_PER_SOL / 100 }),
    );
    tx.sign(payer);
    return conn.sendRawTransaction(tx.serialize());
  },
  // spl-token helpers given the connection (a missing mint throws after the read: fine here)
  'spl:getMint': () => splToken.getMint(conn, Keypair.generate().publicKey),
  'spl:getTokenMetadata': () => splToken.getTokenMetadata(conn, Keypair.generate().publicKey),
  // Anchor account reads of the escrow client
  'anchor:fetchNullable': () =>
    new Program<Escrow>(idl as unknown as Escrow, new AnchorProvider(conn, { publicKey: payer.publicKey } as never, {})).account.order.fetchNullable(
      Keypair.generate().publicKey,
    ),
};

describe('localnet dispatch table (issue 22 item 8)', () => {
  it('answers every JSON-RPC method the server calls, from its dispatch table', async () => {
    const calls = serverCalls();
    const wanted = [...calls.connection, ...[...calls.spl].map((n) => `spl:${n}`), ...[...calls.anchor].map((n) => `anchor:${n}`)];
    // the scan finds what it must (a broken pattern would make the test pass on nothing)
    expect(wanted).toEqual(expect.arrayContaining(['getAccountInfo', 'sendRawTransaction', 'getSignatureStatuses', 'spl:getMint', 'anchor:fetchNullable']));
    expect(wanted.filter((w) => !samples[w]), 'server calls without a sample in this test: add one').toEqual([]);
    for (const w of wanted) {
      const before = requests;
      await samples[w]!().catch(() => undefined);
      expect(requests, `${w} sent no JSON-RPC request`).toBeGreaterThan(before);
    }
    const table = dispatchTable();
    expect(table.length).toBeGreaterThanOrEqual(30);
    const methods = [...sent.keys()].sort();
    expect(methods).toEqual(expect.arrayContaining(['getAccountInfo', 'getMultipleAccounts', 'getTokenAccountsByOwner', 'sendTransaction']));
    // every method sent is in the table, and the node answered none of them -32601
    expect(methods.filter((m) => !table.includes(m))).toEqual([]);
    expect(methods.filter((m) => sent.get(m)!.includes(-32601))).toEqual([]);
  });

  it('serves every method of the table, and only those: anything else is -32601 Method not found', async () => {
    const table = dispatchTable();
    const answers = await raw(
      net.rpcUrl,
      table.map((method, id) => ({ jsonrpc: '2.0', id, method, params: [] })),
    );
    expect(answers).toHaveLength(table.length);
    // a known method answers a result or its own error (bad params), never "not found"
    expect(table.filter((_, i) => answers[i].error?.code === -32601)).toEqual([]);
    const unknown = ['getBlock', 'noSuchMethod', 'getslot', 'GETSLOT', 'constructor', '__proto__', 'toString', 'getSlot ', ''];
    for (const method of unknown) {
      const r = await raw(net.rpcUrl, { jsonrpc: '2.0', id: 7, method, params: [] });
      expect(r, method).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'Method not found' } });
    }
    // in a batch, the unknown method fails alone
    const batch = await raw(net.rpcUrl, [
      { jsonrpc: '2.0', id: 1, method: 'getSlot' },
      { jsonrpc: '2.0', id: 2, method: 'getConfirmedBlock' },
    ]);
    expect(typeof batch[0].result).toBe('number');
    expect(batch[1].error.code).toBe(-32601);
  });
});
