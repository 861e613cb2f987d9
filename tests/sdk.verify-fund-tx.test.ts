/**
 * `@bazaar/client-sdk/verify` (issue 26 item 2): the buyer checks the service's fund transaction with the
 * Codama-generated Kit client before the wallet signs. A genuine transaction from the server (test USDC and
 * wrapped SOL) passes and is then paid on chain; every tampered one (amount, seller, mint, escrow PDA,
 * deadline, expiry, an extra SOL or token transfer to an attacker, another program id, a fee payer that is
 * not the buyer) is refused with the FundTransactionMismatchError code naming the first mismatch. The
 * tampered transactions are re-encoded with @solana/kit from the genuine one, so each differs in one thing.
 */
import {
  AccountRole,
  address,
  compileTransaction,
  decompileTransactionMessage,
  generateKeyPairSigner,
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  setTransactionMessageFeePayer,
  type Address,
  type Instruction,
} from '@solana/kit';
import { getFundMilestoneInstructionDataEncoder, parseFundMilestoneInstruction } from '@bazaar/escrow-client';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FundTransactionMismatchError,
  NATIVE_MINT_ADDRESS,
  SYSTEM_PROGRAM_ADDRESS,
  TOKEN_PROGRAM_ADDRESS,
  verifyFundTransaction,
  type FundMismatchCode,
} from '@bazaar/client-sdk/verify';
import type { BootstrappedChain } from './helpers/localnet.js';
import { sharedBootstrappedChain } from './helpers/shared-chain.js';
import { API, createTestApp, type TestApp } from './helpers/app.js';
import { listing, order, party, pay, type Party, type WalletOrder } from './helpers/parties.js';

let env: BootstrappedChain;
let t: TestApp;
let buyer: Party;
let seller: Party;
let usdcOrder: WalletOrder;
let chainTime: number;
let attacker: Address;

beforeAll(async () => {
  env = await sharedBootstrappedChain('sdk-verify');
  t = await createTestApp({ chain: env.chain, config: { currencies: env.boot.currencies } });
  [buyer, seller] = await Promise.all([party(t, env, { sol: 2, usdc: 100 }), party(t, env)]);
  usdcOrder = await order(t, buyer, (await listing(t, seller, { price: 25 })).listing_id);
  chainTime = (await env.localnet.getClock()).unix_timestamp;
  attacker = (await generateKeyPairSigner()).address;
}, 180_000);

afterAll(async () => {
  await t?.close();
  await env?.stop();
});

type Message = ReturnType<typeof decompileTransactionMessage>;

/** The transaction `base64` with its message changed by `edit`, re-encoded unsigned (what a tampering server would send). */
function tampered(base64: string, edit: (m: Message) => Message): string {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
  const message = decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(tx.messageBytes), { lastValidBlockHeight: 1_000_000n });
  const bytes = getTransactionEncoder().encode(compileTransaction(edit(message) as Parameters<typeof compileTransaction>[0]));
  return getBase64Decoder().decode(bytes);
}

/** `edit` applied to the fund_milestone instruction (the last one): its parsed accounts by name and data. */
function editFund(
  base64: string,
  edit: (ix: Instruction, parsed: ReturnType<typeof parseFundMilestoneInstruction>) => Instruction,
): string {
  return tampered(base64, (m) => {
    const ixs = [...(m.instructions as readonly Instruction[])];
    const last = ixs[ixs.length - 1]!;
    ixs[ixs.length - 1] = edit(last, parseFundMilestoneInstruction({ programAddress: last.programAddress, accounts: last.accounts!, data: last.data! }));
    return { ...m, instructions: ixs } as Message;
  });
}

/** The fund_milestone instruction with account `name` replaced by `to`. */
const withAccount = (ix: Instruction, parsed: ReturnType<typeof parseFundMilestoneInstruction>, name: keyof typeof parsed.accounts, to: Address): Instruction => ({
  ...ix,
  accounts: ix.accounts!.map((a) => (a.address === parsed.accounts[name].address ? { ...a, address: to } : a)),
});

/** The fund_milestone instruction with its data changed. */
const withData = (ix: Instruction, parsed: ReturnType<typeof parseFundMilestoneInstruction>, over: Partial<typeof parsed.data>): Instruction => ({
  ...ix,
  data: getFundMilestoneInstructionDataEncoder().encode({ ...parsed.data, ...over }),
});

const u64 = (n: bigint) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, n, true);
  return b;
};

async function refusal(transaction: string, payment: Partial<WalletOrder['payment']> & { sponsored?: boolean; fee_payer?: string } = {}): Promise<FundMismatchCode> {
  const err = await verifyFundTransaction(usdcOrder, { ...usdcOrder.payment, ...payment, transaction }, { chainTime }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'the tampered transaction must be refused').toBeInstanceOf(FundTransactionMismatchError);
  return (err as FundTransactionMismatchError).code;
}

describe('verifyFundTransaction: a genuine fund transaction from the server', () => {
  it('passes for a test USDC order, names what it commits to, and the buyer then pays it on chain', async () => {
    const verified = await verifyFundTransaction(usdcOrder, usdcOrder.payment, { chainTime });
    expect(verified).toMatchObject({
      feePayer: buyer.wallet,
      rentPayer: buyer.wallet,
      sponsored: false,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
      totalBaseUnits: 25_000_000n,
      escrows: [{ milestone: 1, escrowAddress: usdcOrder.escrow_account_address, vaultAddress: usdcOrder.vault_address, amountBaseUnits: 25_000_000n }],
    });
    const paid = await pay(t, buyer, usdcOrder);
    expect(paid.status).toBe('in_progress');
  });

  it('passes for a wrapped-SOL order (the wrap prelude: create the wSOL account, transfer exactly the price, sync)', async () => {
    const res = await request(t.app)
      .post(`${API}/listings`)
      .set(seller.headers)
      .send({ title: 'Logo design priced in SOL', description: 'A clean, modern logo.', price: 0.05, currency: 'SOL', category: 'design', duration: 3 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const solOrder = await order(t, buyer, res.body.listing_id);
    expect(solOrder.payment_mint).toBe(NATIVE_MINT_ADDRESS);
    const verified = await verifyFundTransaction(solOrder, solOrder.payment, { chainTime });
    expect(verified.totalBaseUnits).toBe(50_000_000n);
    // one more lamport into the wSOL account than the price: refused
    const moreWrapped = tampered(solOrder.payment.transaction, (m) => {
      const ixs = [...(m.instructions as readonly Instruction[])];
      ixs[1] = { ...ixs[1]!, data: Uint8Array.from([2, 0, 0, 0, ...u64(50_000_001n)]) };
      return { ...m, instructions: ixs } as Message;
    });
    const err = await verifyFundTransaction(solOrder, { ...solOrder.payment, transaction: moreWrapped }, { chainTime }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FundTransactionMismatchError);
    expect((err as FundTransactionMismatchError).code).toBe('wrap');
  });

  it('passes for each milestone payment of a two-milestone order (milestone 1 at creation, milestone 2 later), not for the wrong milestone', async () => {
    const res = await request(t.app)
      .post(`${API}/listings`)
      .set(seller.headers)
      .send({
        title: 'Logo design in two parts',
        description: 'Concepts first, then the final files.',
        price: 25,
        currency: 'USDC',
        category: 'design',
        duration: 5,
        milestones: [
          { title: 'Concepts', amount: 10, delivery_days: 2 },
          { title: 'Final files', amount: 15, delivery_days: 3 },
        ],
      });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const created = await order(t, buyer, res.body.listing_id);
    const first = await verifyFundTransaction(created, created.payment, { chainTime });
    expect(first.escrows.map((e) => [e.milestone, e.amountBaseUnits])).toEqual([[1, 10_000_000n]]);
    await pay(t, buyer, created);

    const issued = await request(t.app).post(`${API}/orders/${created.order_id}/milestones/fund`).set(buyer.headers).set('Idempotency-Key', crypto.randomUUID()).send({ milestones: [2] });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const current = (await request(t.app).get(`${API}/orders/${created.order_id}`).set(buyer.headers)).body as WalletOrder;
    const second = await verifyFundTransaction(current, issued.body, { chainTime: (await env.localnet.getClock()).unix_timestamp });
    expect(second.escrows).toEqual([expect.objectContaining({ milestone: 2, amountBaseUnits: 15_000_000n, escrowAddress: current.milestones[1]!.escrow_account_address })]);
    // the same transaction read as milestone 1's payment: refused (another escrow id)
    const err = await verifyFundTransaction(current, { ...issued.body, milestones: [1] }, { chainTime }).catch((e: unknown) => e);
    expect((err as FundTransactionMismatchError).code).toBe('escrow-id');
  });

  it('passes when the payment says a sponsor pays the fee and the transaction has that fee payer', async () => {
    const sponsor = (await generateKeyPairSigner()).address;
    const sponsoredTx = tampered(usdcOrder.payment.transaction, (m) => setTransactionMessageFeePayer(sponsor, m) as Message);
    const verified = await verifyFundTransaction(usdcOrder, { ...usdcOrder.payment, transaction: sponsoredTx, sponsored: true, fee_payer: sponsor }, { chainTime });
    expect(verified).toMatchObject({ feePayer: sponsor, sponsored: true });
    // ... but not another fee payer than the one the payment names
    expect(await refusal(sponsoredTx, { sponsored: true, fee_payer: attacker })).toBe('fee-payer');
  });
});

describe('verifyFundTransaction: a tampered fund transaction is refused, naming the first mismatch', () => {
  it('another amount', async () => {
    const tx = editFund(usdcOrder.payment.transaction, (ix, p) => withData(ix, p, { amount: p.data.amount * 10n }));
    expect(await refusal(tx)).toBe('amount');
  });

  it('another seller', async () => {
    expect(await refusal(editFund(usdcOrder.payment.transaction, (ix, p) => withAccount(ix, p, 'seller', attacker)))).toBe('seller');
  });

  it('another mint', async () => {
    expect(await refusal(editFund(usdcOrder.payment.transaction, (ix, p) => withAccount(ix, p, 'mint', NATIVE_MINT_ADDRESS)))).toBe('mint');
  });

  it('another escrow account (not the PDA of the order id)', async () => {
    expect(await refusal(editFund(usdcOrder.payment.transaction, (ix, p) => withAccount(ix, p, 'order', attacker)))).toBe('escrow');
  });

  it('another escrow id (the PDA of another order)', async () => {
    const other = crypto.getRandomValues(new Uint8Array(16));
    expect(await refusal(editFund(usdcOrder.payment.transaction, (ix, p) => withData(ix, p, { escrowId: other })))).toBe('escrow-id');
  });

  it('another delivery deadline', async () => {
    const tx = editFund(usdcOrder.payment.transaction, (ix, p) => withData(ix, p, { deliveryDeadline: p.data.deliveryDeadline - 86_400n }));
    expect(await refusal(tx)).toBe('delivery-deadline');
  });

  it('terms that stay valid a day past the payment window', async () => {
    const tx = editFund(usdcOrder.payment.transaction, (ix, p) => withData(ix, p, { expiresAt: p.data.expiresAt + 86_400n }));
    expect(await refusal(tx)).toBe('expiry');
  });

  it('an extra instruction: a SOL transfer from the buyer to an attacker', async () => {
    const tx = tampered(usdcOrder.payment.transaction, (m) => ({
      ...m,
      instructions: [
        ...(m.instructions as readonly Instruction[]),
        {
          programAddress: SYSTEM_PROGRAM_ADDRESS,
          accounts: [
            { address: address(buyer.wallet), role: AccountRole.WRITABLE_SIGNER },
            { address: attacker, role: AccountRole.WRITABLE },
          ],
          data: Uint8Array.from([2, 0, 0, 0, ...u64(1_000_000_000n)]),
        },
      ],
    }) as Message);
    expect(await refusal(tx)).toBe('unexpected-instruction');
  });

  it('an extra instruction: a token transfer from the buyer\'s USDC account to an attacker, placed first', async () => {
    const tx = tampered(usdcOrder.payment.transaction, (m) => {
      const ixs = m.instructions as readonly Instruction[];
      const p = parseFundMilestoneInstruction({ programAddress: ixs[0]!.programAddress, accounts: ixs[0]!.accounts!, data: ixs[0]!.data! });
      return {
        ...m,
        instructions: [
          {
            programAddress: TOKEN_PROGRAM_ADDRESS,
            accounts: [
              { address: p.accounts.buyerTokenAccount.address, role: AccountRole.WRITABLE },
              { address: attacker, role: AccountRole.WRITABLE },
              { address: address(buyer.wallet), role: AccountRole.READONLY_SIGNER },
            ],
            data: Uint8Array.from([3, ...u64(75_000_000n)]),
          },
          ...ixs,
        ],
      } as Message;
    });
    expect(await refusal(tx)).toBe('unexpected-instruction');
  });

  it('another program id (a look-alike escrow program)', async () => {
    const tx = editFund(usdcOrder.payment.transaction, (ix) => ({ ...ix, programAddress: attacker }));
    expect(await refusal(tx)).toBe('program-id');
  });

  it('a rent payer (fund_milestone\'s rent_payer) that is neither the buyer nor the declared sponsor', async () => {
    const tx = editFund(usdcOrder.payment.transaction, (ix, p) => {
      // by position: unsponsored, rent_payer has the buyer's address (the buyer account must stay as it is)
      const at = Object.keys(p.accounts).indexOf('rentPayer');
      expect(at).toBeGreaterThan(0);
      return { ...ix, accounts: ix.accounts!.map((a, i) => (i === at ? { ...a, address: attacker } : a)) };
    });
    expect(await refusal(tx)).toBe('rent-payer');
  });

  it('a fee payer that is not the buyer, without sponsorship', async () => {
    const tx = tampered(usdcOrder.payment.transaction, (m) => setTransactionMessageFeePayer(attacker, m) as Message);
    expect(await refusal(tx)).toBe('fee-payer');
  });

  it('bytes that are no transaction', async () => {
    expect(await refusal('AAAA')).toBe('malformed');
  });
});
