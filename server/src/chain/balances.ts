/**
 * Wallet balances straight from the chain: native SOL (lamports) plus, for each configured currency,
 * the wallet's associated token account (a missing ATA counts as 0). One `getMultipleAccounts` call.
 *
 * Lines: `{ currency: 'SOL', mint: null }` = native lamports (9 decimals), always first. Every other
 * line is a configured currency under its code, as `GET /currencies` names it, with its mint: a
 * currency whose mint is the wrapped-SOL native mint (the SOL currency: the fund transaction wraps
 * native SOL itself) adds a `{ currency: 'SOL', mint: So111…2 }` line only when the wallet has a wSOL
 * token account (e.g. after a refund paid out in wSOL): the mint, not the code, tells it from the
 * native line. Other currencies are listed with 0 when the wallet has no token account.
 */
import { type Commitment, type Connection, PublicKey } from '@solana/web3.js';
import { NATIVE_MINT, TOKEN_PROGRAM_ID, getAssociatedTokenAddressSync, unpackAccount } from '@solana/spl-token';
import type { CurrencyInfo, WalletBalance } from './types.js';
import { formatUiAmount } from '../lib/money.js';
import { rpc } from './tx.js';

export const SOL_DECIMALS = 9;

export async function getWalletBalances(
  connection: Connection,
  wallet: string,
  currencies: CurrencyInfo[],
  commitment: Commitment = 'confirmed',
): Promise<WalletBalance[]> {
  const owner = new PublicKey(wallet);
  const atas = currencies.map((c) =>
    getAssociatedTokenAddressSync(new PublicKey(c.mint), owner, true, new PublicKey(c.tokenProgram ?? TOKEN_PROGRAM_ID)),
  );
  const infos = await rpc(() => connection.getMultipleAccountsInfo([owner, ...atas], commitment), {
    action: 'reading balances',
  });
  const lamports = BigInt(infos[0]?.lamports ?? 0);
  const out: WalletBalance[] = [
    { currency: 'SOL', mint: null, amountBaseUnits: lamports, decimals: SOL_DECIMALS, uiAmount: formatUiAmount(lamports, SOL_DECIMALS) },
  ];
  currencies.forEach((c, i) => {
    const info = infos[i + 1];
    let amount = 0n;
    if (info) {
      try {
        amount = unpackAccount(atas[i], info, info.owner).amount;
      } catch {
        amount = 0n; // not a token account (should not happen for an ATA address)
      }
    }
    const wrappedSol = c.mint === NATIVE_MINT.toBase58();
    if (wrappedSol && !info) return; // the native line already stands for SOL
    out.push({ currency: c.code, mint: c.mint, amountBaseUnits: amount, decimals: c.decimals, uiAmount: formatUiAmount(amount, c.decimals) });
  });
  return out;
}
