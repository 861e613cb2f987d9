/**
 * The localnet's PubSub websocket through the client the service uses, @solana/web3.js 1.x:
 * onAccountChange, onProgramAccountChange (with memcmp/dataSize filters), onSignature, onSlotChange,
 * onRootChange and their removal parse what bazaar-localnet sends (web3.js validates every
 * notification with its superstruct schemas and drops those that do not match).
 * The wire format itself is pinned by programs/localnet/tests/pubsub.rs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import bs58 from 'bs58';
import {
  type AccountInfo,
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  type KeyedAccountInfo,
  PublicKey,
  SystemProgram,
  Transaction,
} from '@solana/web3.js';
import { startLocalnet, type Localnet } from './helpers/localnet';
import { eventually } from './helpers/eventually';

let net: Localnet;
let connection: Connection;

beforeAll(async () => {
  net = await startLocalnet();
  connection = new Connection(net.rpcUrl, { commitment: 'confirmed', wsEndpoint: net.wsUrl });
});

afterAll(async () => {
  await net?.stop();
});

/** The first value `pick` accepts among those pushed, within 10 s (rejects naming `what`). */
const firstOf = <T>(values: T[], pick: (v: T) => boolean, what: string) =>
  eventually(() => values.find(pick), { what, timeoutMs: 10_000, intervalMs: 10 });

/**
 * Wait until the subscriptions made so far are live on the server: web3.js subscribes lazily, in
 * order, on one socket, and the node answers in order, so a slot notification after them proves it.
 */
async function live() {
  const slots: number[] = [];
  const id = connection.onSlotChange((s) => slots.push(s.slot));
  await firstOf(slots, () => true, 'a slot notification');
  await connection.removeSlotChangeListener(id);
}

async function setAccount(key: PublicKey, data: Buffer, owner: PublicKey, lamports: number) {
  const res = await fetch(net.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'localnet_setAccount', params: [key.toBase58(), { lamports, data: data.toString('base64'), owner: owner.toBase58() }] }),
  });
  expect(((await res.json()) as { error?: unknown }).error).toBeUndefined();
}

describe('localnet websocket through @solana/web3.js', () => {
  it('onAccountChange and onSignature see a transfer; a removed listener hears nothing more', async () => {
    const payer = Keypair.generate();
    const to = Keypair.generate().publicKey;
    const changes: Array<{ info: AccountInfo<Buffer>; slot: number }> = [];
    const id = connection.onAccountChange(to, (info, ctx) => changes.push({ info, slot: ctx.slot }), { commitment: 'confirmed' });
    await live();
    const airdrop = await connection.requestAirdrop(payer.publicKey, LAMPORTS_PER_SOL);
    await connection.confirmTransaction({ signature: airdrop, ...(await connection.getLatestBlockhash()) });

    const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 2_000_000 }));
    tx.recentBlockhash = (await connection.getLatestBlockhash()).blockhash;
    tx.feePayer = payer.publicKey;
    tx.sign(payer);
    const signed = new Promise<{ err: unknown; slot: number }>((resolve) =>
      connection.onSignature(bs58.encode(tx.signature!), (r, ctx) => resolve({ err: r.err, slot: ctx.slot }), 'confirmed'),
    );
    await connection.sendRawTransaction(tx.serialize());
    expect(await signed).toMatchObject({ err: null });

    const change = await firstOf(changes, () => true, 'an account change');
    expect(change.info.lamports).toBe(2_000_000);
    expect(change.info.owner.equals(SystemProgram.programId)).toBe(true);
    expect(change.info.data.length).toBe(0);
    expect(change.slot).toBeGreaterThan(0);

    await connection.removeAccountChangeListener(id);
    const before = changes.length;
    const again = await connection.requestAirdrop(to, 1_000_000);
    await connection.confirmTransaction({ signature: again, ...(await connection.getLatestBlockhash()) });
    expect(await connection.getBalance(to)).toBe(3_000_000);
    expect(changes.length).toBe(before);
  });

  it('onProgramAccountChange with memcmp and dataSize filters: only the program accounts that match', async () => {
    const program = Keypair.generate().publicKey;
    const tag = Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]);
    const matching = Keypair.generate().publicKey;
    const untagged = Keypair.generate().publicKey;
    const seen: KeyedAccountInfo[] = [];
    const all: KeyedAccountInfo[] = [];
    const filtered = connection.onProgramAccountChange(program, (k) => seen.push(k), {
      commitment: 'confirmed',
      filters: [{ memcmp: { offset: 0, bytes: bs58.encode(tag) } }, { dataSize: 24 }],
    });
    const unfiltered = connection.onProgramAccountChange(program, (k) => all.push(k), 'confirmed');
    await live();

    await setAccount(untagged, Buffer.alloc(24, 9), program, 1_000_000);
    await setAccount(matching, Buffer.concat([tag, Buffer.alloc(16, 1)]), program, 2_000_000);
    await setAccount(Keypair.generate().publicKey, Buffer.concat([tag, Buffer.alloc(16, 1)]), Keypair.generate().publicKey, 1_000_000);

    const hit = await firstOf(seen, () => true, 'a program account change');
    expect(hit.accountId.equals(matching)).toBe(true);
    expect(hit.accountInfo.owner.equals(program)).toBe(true);
    expect(hit.accountInfo.lamports).toBe(2_000_000);
    expect(hit.accountInfo.data.subarray(0, 8)).toEqual(tag);
    await firstOf(all, (k) => k.accountId.equals(matching), 'the matching account on the unfiltered subscription');
    expect(all.map((k) => k.accountId.toBase58()).sort()).toEqual([matching, untagged].map((k) => k.toBase58()).sort());
    expect(seen).toHaveLength(1);

    await connection.removeProgramAccountChangeListener(filtered);
    await connection.removeProgramAccountChangeListener(unfiltered);
  });

  it('onSlotChange and onRootChange follow the slots', async () => {
    const slots: Array<{ slot: number; parent: number; root: number }> = [];
    const roots: number[] = [];
    const s = connection.onSlotChange((info) => slots.push(info));
    const r = connection.onRootChange((root) => roots.push(root));
    const first = await firstOf(slots, () => true, 'a slot notification');
    expect(first.parent).toBe(first.slot - 1);
    await firstOf(slots, (x) => x.slot > first.slot, 'a later slot');
    await firstOf(roots, (x) => x > 0, 'a root notification');
    await connection.removeSlotChangeListener(s);
    await connection.removeRootChangeListener(r);
  });
});
