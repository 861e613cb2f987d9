/**
 * pda.ts mirrors the escrow program's seeds: checked against the Rust constants
 * (programs/escrow/src/constants.rs) and against the PDA seed definitions Anchor writes into the IDL.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Keypair, PublicKey } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, NATIVE_MINT, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { describe, expect, it } from 'vitest';
import { associatedTokenAddress, bytesToUuid, configPda, derivedCount, orderIdBytes, orderPda, programDataAddress, uuidToBytes, vaultAddress } from '../server/src/chain/pda';
import { getAssociatedTokenAddressSync } from '@solana/spl-token';

const root = (p: string) => fileURLToPath(new URL(`../${p}`, import.meta.url));
const PROGRAM_ID = new PublicKey('AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r');
const ORDER_UUID = '0b6f4f0e-7c1a-4d2e-9a55-3c2b1d0e9f88';

type Seed = { kind: 'const'; value: number[] } | { kind: 'arg'; path: string } | { kind: 'account'; path: string };
interface IdlAccount {
  name: string;
  pda?: { seeds: Seed[]; program?: { kind: string; value?: number[] } };
}

describe('order id <-> 16 bytes', () => {
  it('round-trips a UUID through its 16 bytes, hex order preserved', () => {
    const bytes = uuidToBytes(ORDER_UUID);
    expect(bytes).toHaveLength(16);
    expect(Buffer.from(bytes).toString('hex')).toBe(ORDER_UUID.replace(/-/g, ''));
    expect(bytesToUuid(bytes)).toBe(ORDER_UUID);
    expect(bytesToUuid(uuidToBytes(ORDER_UUID.toUpperCase()))).toBe(ORDER_UUID);
  });

  it('rejects malformed ids', () => {
    expect(() => uuidToBytes('not-a-uuid')).toThrow(TypeError);
    expect(() => orderIdBytes(new Uint8Array(15))).toThrow(TypeError);
    expect(() => bytesToUuid(new Uint8Array(17))).toThrow(TypeError);
  });

  it('derives the same order PDA from the UUID string and from its bytes', () => {
    expect(orderPda(PROGRAM_ID, ORDER_UUID).equals(orderPda(PROGRAM_ID, uuidToBytes(ORDER_UUID)))).toBe(true);
    expect(orderPda(PROGRAM_ID, ORDER_UUID).equals(orderPda(PROGRAM_ID, '0b6f4f0e-7c1a-4d2e-9a55-3c2b1d0e9f89'))).toBe(false);
  });
});

describe('seeds match the Rust program', () => {
  it('uses the literals of programs/escrow/src/constants.rs', () => {
    const rs = readFileSync(root('programs/escrow/src/constants.rs'), 'utf8');
    const seed = (name: string) => new RegExp(`${name}: &\\[u8\\] = b"([^"]+)"`).exec(rs)?.[1];
    expect(seed('CONFIG_SEED')).toBe('config');
    expect(seed('ORDER_SEED')).toBe('order');
    const id = /declare_id!\("(\w+)"\)/.exec(readFileSync(root('programs/escrow/src/lib.rs'), 'utf8'))?.[1];
    expect(id).toBe(PROGRAM_ID.toBase58());
    expect(configPda(PROGRAM_ID).equals(PublicKey.findProgramAddressSync([Buffer.from(seed('CONFIG_SEED')!)], PROGRAM_ID)[0])).toBe(true);
  });

  const idlPath = root('programs/escrow/idl/escrow.json');
  it.runIf(existsSync(idlPath))('matches the PDA seed definitions in the IDL (config, order, vault of fund)', () => {
    const idl = JSON.parse(readFileSync(idlPath, 'utf8')) as {
      address: string;
      instructions: { name: string; accounts: IdlAccount[]; args: { name: string }[] }[];
    };
    expect(idl.address).toBe(PROGRAM_ID.toBase58());
    const fund = idl.instructions.find((i) => i.name === 'fund')!;
    const mint = Keypair.generate().publicKey;
    const buyer = Keypair.generate().publicKey;
    const tokenProgram = TOKEN_PROGRAM_ID;
    const order = orderPda(PROGRAM_ID, ORDER_UUID);
    const accounts: Record<string, PublicKey> = { mint, buyer, token_program: tokenProgram, order, config: configPda(PROGRAM_ID) };
    const args: Record<string, Buffer> = { order_id: Buffer.from(uuidToBytes(ORDER_UUID)) };
    const derive = (acc: IdlAccount): PublicKey => {
      const seeds = acc.pda!.seeds.map((s) => {
        if (s.kind === 'const') return Buffer.from(s.value);
        if (s.kind === 'arg') return args[s.path];
        const key = accounts[s.path];
        expect(key, `seed account ${s.path}`).toBeDefined();
        return key.toBuffer();
      });
      const program = acc.pda!.program?.kind === 'const' ? new PublicKey(Buffer.from(acc.pda!.program.value!)) : PROGRAM_ID;
      return PublicKey.findProgramAddressSync(seeds, program)[0];
    };
    const byName = Object.fromEntries(fund.accounts.map((a) => [a.name, a]));
    expect(byName.config.pda).toBeDefined();
    expect(derive(byName.config).equals(configPda(PROGRAM_ID))).toBe(true);
    expect(byName.order.pda).toBeDefined();
    expect(derive(byName.order).equals(order)).toBe(true);
    // the vault is the order's ATA: Anchor describes it as a PDA of the associated token program
    expect(byName.vault.pda).toBeDefined();
    expect(byName.vault.pda!.program?.value && new PublicKey(Buffer.from(byName.vault.pda!.program.value)).equals(ASSOCIATED_TOKEN_PROGRAM_ID)).toBe(true);
    expect(derive(byName.vault).equals(vaultAddress(order, mint, tokenProgram))).toBe(true);
  });

  it.runIf(existsSync(idlPath))('derives the ProgramData address initialize_config checks like the IDL does', () => {
    const idl = JSON.parse(readFileSync(idlPath, 'utf8')) as { instructions: { name: string; accounts: IdlAccount[] }[] };
    const init = idl.instructions.find((i) => i.name === 'initialize_config')!;
    const pd = init.accounts.find((a) => a.name === 'program_data')!.pda!;
    expect(pd.seeds).toEqual([{ kind: 'const', value: [...PROGRAM_ID.toBytes()] }]);
    const loader = new PublicKey(Buffer.from(pd.program!.value!));
    expect(loader.toBase58()).toBe('BPFLoaderUpgradeab1e11111111111111111111111');
    expect(programDataAddress(PROGRAM_ID).equals(PublicKey.findProgramAddressSync([PROGRAM_ID.toBuffer()], loader)[0])).toBe(true);
    // another deployment's id gives another ProgramData
    expect(programDataAddress(Keypair.generate().publicKey).equals(programDataAddress(PROGRAM_ID))).toBe(false);
  });

  it('derives vaults per token program (SPL Token vs Token-2022 give different addresses)', () => {
    const order = orderPda(PROGRAM_ID, ORDER_UUID);
    const classic = vaultAddress(order, NATIVE_MINT, TOKEN_PROGRAM_ID);
    const t22 = vaultAddress(order, NATIVE_MINT, TOKEN_2022_PROGRAM_ID);
    expect(classic.equals(t22)).toBe(false);
    expect(PublicKey.isOnCurve(order.toBytes())).toBe(false);
    expect(
      classic.equals(
        PublicKey.findProgramAddressSync([order.toBuffer(), TOKEN_PROGRAM_ID.toBuffer(), NATIVE_MINT.toBuffer()], ASSOCIATED_TOKEN_PROGRAM_ID)[0],
      ),
    ).toBe(true);
  });
});

describe('remembered derivations (issue 28: the order path derived the same addresses several times per order)', () => {
  const raw = {
    config: (p: PublicKey) => PublicKey.findProgramAddressSync([Buffer.from('config')], p)[0],
    order: (p: PublicKey, id: string) => PublicKey.findProgramAddressSync([Buffer.from('order'), Buffer.from(uuidToBytes(id))], p)[0],
    ata: (owner: PublicKey, mint: PublicKey, tp: PublicKey) => getAssociatedTokenAddressSync(mint, owner, true, tp),
  };

  it('answer what an uncached derivation answers, for every input, first and second time', () => {
    for (let i = 0; i < 20; i++) {
      const program = Keypair.generate().publicKey;
      const id = crypto.randomUUID();
      const owner = i % 2 ? Keypair.generate().publicKey : raw.order(program, id); // on and off the curve
      const mint = Keypair.generate().publicKey;
      const tp = i % 3 ? TOKEN_PROGRAM_ID : TOKEN_2022_PROGRAM_ID;
      for (let round = 0; round < 2; round++) {
        expect(configPda(program).equals(raw.config(program))).toBe(true);
        expect(configPda(program.toBase58()).equals(raw.config(program))).toBe(true);
        expect(orderPda(program, id).equals(raw.order(program, id))).toBe(true);
        expect(orderPda(program, id.toUpperCase()).equals(raw.order(program, id))).toBe(true);
        expect(orderPda(program, uuidToBytes(id)).equals(raw.order(program, id))).toBe(true);
        expect(associatedTokenAddress(owner, mint, tp).equals(raw.ata(owner, mint, tp))).toBe(true);
        expect(associatedTokenAddress(owner.toBase58(), mint.toBase58(), tp.toBase58()).equals(raw.ata(owner, mint, tp))).toBe(true);
        expect(vaultAddress(owner, mint, tp).equals(raw.ata(owner, mint, tp))).toBe(true);
        expect(programDataAddress(program).equals(PublicKey.findProgramAddressSync([program.toBuffer()], new PublicKey('BPFLoaderUpgradeab1e11111111111111111111111'))[0])).toBe(true);
      }
    }
  });

  it('keys on every input: another program, order, owner, mint or token program is another address', () => {
    const [p1, p2, o1, o2, m1, m2] = Array.from({ length: 6 }, () => Keypair.generate().publicKey);
    const id1 = crypto.randomUUID();
    const id2 = crypto.randomUUID();
    expect(configPda(p1).equals(configPda(p2))).toBe(false);
    expect(orderPda(p1, id1).equals(orderPda(p2, id1))).toBe(false);
    expect(orderPda(p1, id1).equals(orderPda(p1, id2))).toBe(false);
    const base = associatedTokenAddress(o1, m1, TOKEN_PROGRAM_ID);
    expect(associatedTokenAddress(o2, m1, TOKEN_PROGRAM_ID).equals(base)).toBe(false);
    expect(associatedTokenAddress(o1, m2, TOKEN_PROGRAM_ID).equals(base)).toBe(false);
    expect(associatedTokenAddress(o1, m1, TOKEN_2022_PROGRAM_ID).equals(base)).toBe(false);
    // owner and mint are not interchangeable in the key
    expect(associatedTokenAddress(m1, o1, TOKEN_PROGRAM_ID).equals(base)).toBe(false);
  });

  it('derive once: a second call returns the remembered address without a new entry', () => {
    const program = Keypair.generate().publicKey;
    const id = crypto.randomUUID();
    const first = orderPda(program, id);
    const size = derivedCount();
    expect(orderPda(program, id)).toBe(first);
    expect(derivedCount()).toBe(size);
  });
});
