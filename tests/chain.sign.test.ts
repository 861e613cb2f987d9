/**
 * chain/sign.ts: the service's signatures made by node:crypto must be the bytes web3.js's own
 * Transaction.partialSign / Transaction.sign write (Ed25519 is deterministic, RFC 8032), with the same
 * rules (dedupe, unknown signer, fee payer by default, other signatures kept).
 */
import { Keypair, PublicKey, SystemProgram, Transaction, type Signer } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { ed25519Sign, partialSignTransaction, signTransaction } from '../server/src/chain/sign';
import { ed25519Verify } from '../server/src/modules/auth/siws';

const blockhash = () => Keypair.generate().publicKey.toBase58();

/** a transaction the service co-signs while the buyer pays its fee (the shape of a fund transaction) */
function coSigned(buyer: PublicKey, service: PublicKey, sponsor?: PublicKey, hash = blockhash()): Transaction {
  const tx = new Transaction().add(
    SystemProgram.transfer({ fromPubkey: buyer, toPubkey: service, lamports: 5 }),
    SystemProgram.transfer({ fromPubkey: service, toPubkey: buyer, lamports: 1 }),
    ...(sponsor ? [SystemProgram.transfer({ fromPubkey: sponsor, toPubkey: buyer, lamports: 2 })] : []),
  );
  tx.feePayer = sponsor ?? buyer;
  tx.recentBlockhash = hash;
  return tx;
}

const wire = (tx: Transaction) => tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64');

describe('partialSignTransaction', () => {
  it('writes the signature bytes Transaction.partialSign writes, for one and for two signers', () => {
    for (let i = 0; i < 10; i++) {
      const buyer = Keypair.generate();
      const service = Keypair.generate();
      const sponsor = i % 2 ? Keypair.generate() : undefined;
      const hash = blockhash();
      const signers: Signer[] = sponsor ? [service, sponsor] : [service];
      const ours = coSigned(buyer.publicKey, service.publicKey, sponsor?.publicKey, hash);
      const theirs = coSigned(buyer.publicKey, service.publicKey, sponsor?.publicKey, hash);
      partialSignTransaction(ours, ...signers);
      theirs.partialSign(...signers);
      expect(wire(ours)).toBe(wire(theirs));
      // the buyer's signature still missing, the service's valid
      const slot = ours.signatures.find((s) => s.publicKey.equals(service.publicKey))!;
      expect(ed25519Verify(service.publicKey.toBytes(), ours.serializeMessage(), slot.signature!)).toBe(true);
      expect(ours.signatures.find((s) => s.publicKey.equals(buyer.publicKey))!.signature).toBeNull();
      // the buyer signs last, as a wallet does: the whole transaction verifies
      ours.partialSign(buyer);
      expect(ours.verifySignatures()).toBe(true);
    }
  });

  it('keeps a signature made before it and signs each signer once', () => {
    const buyer = Keypair.generate();
    const service = Keypair.generate();
    const tx = coSigned(buyer.publicKey, service.publicKey);
    tx.partialSign(buyer);
    const before = Buffer.from(tx.signatures.find((s) => s.publicKey.equals(buyer.publicKey))!.signature!);
    partialSignTransaction(tx, service, service);
    expect(Buffer.from(tx.signatures.find((s) => s.publicKey.equals(buyer.publicKey))!.signature!).equals(before)).toBe(true);
    expect(tx.verifySignatures()).toBe(true);
  });

  it('refuses a key that is not a required signer, and no signer at all', () => {
    const buyer = Keypair.generate();
    const service = Keypair.generate();
    const stranger = Keypair.generate();
    const tx = coSigned(buyer.publicKey, service.publicKey);
    expect(() => partialSignTransaction(tx, stranger)).toThrow(`unknown signer: ${stranger.publicKey.toBase58()}`);
    expect(() => partialSignTransaction(tx)).toThrow('No signers');
  });
});

describe('signTransaction', () => {
  it('writes the bytes Transaction.sign writes; with no fee payer set the first signer pays', () => {
    const payer = Keypair.generate();
    const other = Keypair.generate();
    const hash = blockhash();
    const build = () => {
      const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: other.publicKey, toPubkey: payer.publicKey, lamports: 3 }));
      tx.recentBlockhash = hash;
      return tx;
    };
    const ours = build();
    const theirs = build();
    signTransaction(ours, payer, other);
    theirs.sign(payer, other);
    expect(ours.serialize().toString('base64')).toBe(theirs.serialize().toString('base64'));
    expect(ours.compileMessage().accountKeys[0]!.equals(payer.publicKey)).toBe(true);
    expect(ours.verifySignatures()).toBe(true);
  });

  it('clears signatures made before it (a re-signed transaction carries only the new ones)', () => {
    const payer = Keypair.generate();
    const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }));
    tx.recentBlockhash = blockhash();
    signTransaction(tx, payer);
    const first = Buffer.from(tx.signature!);
    tx.recentBlockhash = blockhash(); // a new blockhash: the old signature no longer covers the message
    signTransaction(tx, payer);
    expect(Buffer.from(tx.signature!).equals(first)).toBe(false);
    expect(tx.verifySignatures()).toBe(true);
  });
});

describe('ed25519Sign', () => {
  it('RFC 8032 section 7.1 TEST 2: the published signature of a one-byte message', () => {
    const seed = Buffer.from('4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb', 'hex');
    const kp = Keypair.fromSeed(seed);
    expect(Buffer.from(kp.publicKey.toBytes()).toString('hex')).toBe('3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c');
    expect(ed25519Sign(Buffer.from('72', 'hex'), kp).toString('hex')).toBe(
      '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
    );
  });
});
