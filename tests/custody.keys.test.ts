/**
 * Deposit key derivation: SLIP-0010 ed25519 test vector 1 (satoshilabs/slips slip-0010.md) through
 * the library the service uses, the Solana path m/44'/501'/{index}'/0' against the address wallets
 * derive from the BIP-39 "abandon ... about" seed, and the DepositKeys wrapper.
 */
import { HDKey } from 'micro-key-producer/slip10.js';
import { describe, expect, it } from 'vitest';
import { DepositKeys, depositPath, parseSeedHex } from '../server/src/modules/custody/custody.keys';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

// SLIP-0010 "Test vector 1 for ed25519", seed 000102030405060708090a0b0c0d0e0f
const VECTOR_1: Array<[string, string, string, string]> = [
  // path, chain code, private key, public key (0x00 || ed25519 public key)
  ['m', '90046a93de5380a72b5e45010748567d5ea02bbf6522f979e05c0d8d8ca9fffb', '2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7', '00a4b2856bfec510abab89753fac1ac0e1112364e7d250545963f135f2a33188ed'],
  ["m/0'", '8b59aa11380b624e81507a27fedda59fea6d0b779a778918a2fd3590e16e9c69', '68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3', '008c8a13df77a28f3445213a0f432fde644acaa215fc72dcdf300d5efaa85d350c'],
  ["m/0'/1'", 'a320425f77d1b5c2505a6b1b27382b37368ee640e3557c315416801243552f14', 'b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2', '001932a5270f335bed617d5b935c80aedb1a35bd9fc1e31acafd5372c30f5c1187'],
  ["m/0'/1'/2'", '2e69929e00b5ab250f49c3fb1c12f252de4fed2c1db88387094a0f8c4c9ccd6c', '92a5b23c0b8a99e37d07df3fb9966917f5d06e02ddbd909c7e184371463e9fc9', '00ae98736566d30ed0e9d2f4486a64bc95740d89c7db33f52121f8ea8f76ff0fc1'],
  ["m/0'/1'/2'/2'", '8f6d87f93d750e0efccda017d662a1b31a266e4a6f5993b15f5c1f07f74dd5cc', '30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662', '008abae2d66361c879b900d204ad2cc4984fa2aa344dd7ddc46007329ac76c429c'],
  ["m/0'/1'/2'/2'/1000000000'", '68789923a0cac2cd5a29172a475fe9e0fb14cd6adb5ad98a3fa70333e7afa230', '8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793', '003c24da049451555d51a7014a37337aa4e12d41e485abccfa46b47dfb2af54b7a'],
];

// BIP-39 seed of "abandon abandon ... about" (no passphrase); Solana wallets show this address at m/44'/501'/0'/0'
const ABANDON_SEED =
  '5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4';

describe('SLIP-0010 ed25519 derivation', () => {
  it.each(VECTOR_1)('test vector 1, %s', (path, chainCode, privateKey, publicKey) => {
    const k = HDKey.fromMasterSeed(Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex')).derive(path);
    expect(hex(k.chainCode)).toBe(chainCode);
    expect(hex(k.privateKey)).toBe(privateKey);
    expect(hex(k.publicKey)).toBe(publicKey);
  });

  it('the Solana path gives the address wallets show for the BIP-39 test mnemonic', () => {
    expect(depositPath(0)).toBe("m/44'/501'/0'/0'");
    expect(new DepositKeys(ABANDON_SEED).address(0)).toBe('HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk');
  });

  it('deposit keys: deterministic per (seed, index), distinct across indexes and seeds; the keypair signs for the address', () => {
    const seed = 'a1'.repeat(32);
    const a = new DepositKeys(seed);
    const b = new DepositKeys(Buffer.from(seed, 'hex'));
    expect(a.address(7)).toBe(b.address(7));
    const addresses = new Set(Array.from({ length: 50 }, (_, i) => a.address(i)));
    expect(addresses.size).toBe(50);
    expect(new DepositKeys('b2'.repeat(32)).address(7)).not.toBe(a.address(7));
    expect(a.keypair(3).publicKey.toBase58()).toBe(a.address(3));
    const kp = a.keypair(3);
    expect(kp.secretKey.slice(0, 32)).toEqual(HDKey.fromMasterSeed(Buffer.from(seed, 'hex')).derive("m/44'/501'/3'/0'").privateKey);
  });

  it('refuses bad seeds and indexes', () => {
    expect(() => parseSeedHex('abcd')).toThrow(/16..64 bytes/);
    expect(() => parseSeedHex('zz'.repeat(32))).toThrow();
    expect(parseSeedHex('0x' + '00'.repeat(16))).toHaveLength(16);
    expect(() => depositPath(-1)).toThrow(RangeError);
    expect(() => depositPath(2 ** 31)).toThrow(RangeError);
    expect(depositPath(2 ** 31 - 1)).toBe("m/44'/501'/2147483647'/0'");
  });
});
