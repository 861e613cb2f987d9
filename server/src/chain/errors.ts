/**
 * Translation of RPC / transaction failures into the service's DomainError vocabulary:
 *  - RPC unreachable (ECONNREFUSED, fetch failed, DNS, socket reset, HTTP 5xx, timeouts)
 *      -> DomainError('chain-unavailable')                       (503 problem)
 *  - transaction rejected (preflight or on-chain), program error codes / Anchor error names
 *      -> DomainError('chain-transaction-failed', detail, { program_error, program_error_code?, signature?, logs? })  (502)
 * Anchor errors are read from the program logs ("AnchorError ... Error Code: X. Error Number: N")
 * or, without logs, from `{ InstructionError: [i, { Custom: n }] }` mapped through the escrow IDL errors
 * (>= 6000), Anchor's framework errors (< 6000 for the escrow program) and SPL Token errors.
 */
import { LangErrorCode } from '@coral-xyz/anchor';
import { DomainError } from '../errors.js';

/** SPL Token / Token-2022 error enum (append-only, stable numeric codes). */
const TOKEN_ERRORS = [
  'NotRentExempt', 'InsufficientFunds', 'InvalidMint', 'MintMismatch', 'OwnerMismatch', 'FixedSupply',
  'AlreadyInUse', 'InvalidNumberOfProvidedSigners', 'InvalidNumberOfRequiredSigners', 'UninitializedState',
  'NativeNotSupported', 'NonNativeHasBalance', 'InvalidInstruction', 'InvalidState', 'Overflow',
  'AuthorityTypeNotSupported', 'MintCannotFreeze', 'AccountFrozen', 'MintDecimalsMismatch', 'NonNativeNotSupported',
];

/** Runtime TransactionError messages (solana-sdk) -> their enum names. */
const TX_ERROR_MESSAGES: [RegExp, string][] = [
  [/no record of a prior credit/i, 'AccountNotFound'],
  [/insufficient funds for fee/i, 'InsufficientFundsForFee'],
  [/insufficient funds for rent/i, 'InsufficientFundsForRent'],
  [/Blockhash not found/i, 'BlockhashNotFound'],
  [/already been processed/i, 'AlreadyProcessed'],
  [/signature verification fail|invalid signature/i, 'SignatureFailure'],
  [/missing signature|not enough signers/i, 'MissingSignature'],
  [/Attempt to load a program that does not exist/i, 'ProgramAccountNotFound'],
  [/too large/i, 'TransactionTooLarge'],
];

const LANG_ERRORS = new Map<number, string>(Object.entries(LangErrorCode).map(([name, code]) => [code as number, name]));

const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'ECONNABORTED',
]);

export interface TranslateContext {
  /** escrow program id (base58) to attribute `Custom` codes to the escrow IDL errors */
  programId?: string;
  /** escrow IDL errors: code -> name */
  programErrors?: Map<number, string>;
  signature?: string;
  /** what the service was doing, for the problem detail */
  action?: string;
}

function errorChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  let e: unknown = err;
  for (let i = 0; e && i < 6; i++) {
    out.push(e);
    e = (e as { cause?: unknown }).cause;
  }
  return out;
}

/** True when `err` means the RPC node could not be reached or answered with a server error. */
export function isNetworkError(err: unknown): boolean {
  for (const e of errorChain(err)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    if ((e as { name?: unknown }).name === 'TimeoutError') return true;
    const msg = e instanceof Error ? e.message : String(e);
    if (/fetch failed|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|socket hang up|network error|aborted due to timeout|TimeoutError|request to .* failed|(^|\D)50[234]( |:|$)|Service Unavailable|Bad Gateway/i.test(msg)) {
      return true;
    }
  }
  return false;
}

export interface ProgramErrorInfo {
  program_error: string;
  program_error_code?: number;
  program_error_message?: string;
  instruction_index?: number;
  program_id?: string;
}

/** Parse the first Anchor error (or a custom program error) out of program logs. */
export function parseLogs(logs: readonly string[] | undefined, ctx: TranslateContext = {}): ProgramErrorInfo | null {
  if (!logs?.length) return null;
  for (const line of logs) {
    const m = /AnchorError.*?Error Code: (\w+)\. Error Number: (\d+)\. Error Message: (.*?)\.?$/.exec(line);
    if (m) return { program_error: m[1], program_error_code: Number(m[2]), program_error_message: m[3] };
  }
  // "Program <id> failed: custom program error: 0x1" — attribute to the failing program.
  for (const line of logs) {
    const m = /Program (\w+) failed: custom program error: 0x([0-9a-f]+)/i.exec(line);
    if (m) return customError(Number.parseInt(m[2], 16), m[1], ctx);
  }
  for (const line of logs) {
    const m = /Program (\w+) failed: (.*)$/.exec(line);
    if (m) return { program_error: 'ProgramFailed', program_id: m[1], program_error_message: m[2] };
  }
  for (const line of logs) {
    const m = /Program log: Error: (.*)$/.exec(line);
    if (m) return { program_error: 'ProgramError', program_error_message: m[1] };
  }
  return null;
}

function customError(code: number, programId: string | undefined, ctx: TranslateContext): ProgramErrorInfo {
  const isEscrow = !programId || !ctx.programId || programId === ctx.programId;
  let name: string | undefined;
  if (isEscrow) name = ctx.programErrors?.get(code) ?? LANG_ERRORS.get(code);
  if (!name && !isEscrow) name = TOKEN_ERRORS[code];
  if (!name && !programId) name = TOKEN_ERRORS[code];
  return { program_error: name ?? `Custom(${code})`, program_error_code: code, ...(programId ? { program_id: programId } : {}) };
}

/** Map a `TransactionError` JSON (from getSignatureStatuses / simulate) to program error info. */
export function parseTransactionError(txErr: unknown, ctx: TranslateContext = {}, programIds?: string[]): ProgramErrorInfo {
  if (typeof txErr === 'string') return { program_error: txErr };
  if (txErr && typeof txErr === 'object' && 'InstructionError' in txErr) {
    const [idx, inner] = (txErr as { InstructionError: [number, unknown] }).InstructionError;
    const programId = programIds?.[idx];
    if (inner && typeof inner === 'object' && 'Custom' in inner) {
      return { ...customError(Number((inner as { Custom: number }).Custom), programId, ctx), instruction_index: idx };
    }
    return { program_error: typeof inner === 'string' ? inner : JSON.stringify(inner), instruction_index: idx, ...(programId ? { program_id: programId } : {}) };
  }
  return { program_error: JSON.stringify(txErr) };
}

/**
 * Convert any error thrown while talking to the chain into a DomainError (DomainErrors pass through).
 * Logs are attached (at most 30 lines) in `extensions.logs` for diagnosis.
 */
export function translateChainError(err: unknown, ctx: TranslateContext = {}): DomainError {
  if (err instanceof DomainError) return err;
  const action = ctx.action ? `${ctx.action}: ` : '';
  if (isNetworkError(err)) {
    return new DomainError('chain-unavailable', `${action}the Solana RPC node cannot be reached`, {
      cause_message: err instanceof Error ? err.message.slice(0, 300) : String(err).slice(0, 300),
    });
  }
  const e = err as { logs?: string[]; transactionLogs?: string[]; message?: string; transactionError?: unknown };
  const logs = e?.logs ?? e?.transactionLogs;
  let info = parseLogs(logs, ctx);
  const message = err instanceof Error ? err.message : String(err);
  if (!info) {
    const m = /custom program error: 0x([0-9a-f]+)/i.exec(message);
    if (m) info = customError(Number.parseInt(m[1], 16), undefined, ctx);
  }
  if (!info) {
    const known = TX_ERROR_MESSAGES.find(([re]) => re.test(message));
    const m = /Transaction simulation failed: (.*?)(\.|$)/.exec(message);
    info = known
      ? { program_error: known[1], program_error_message: m?.[1] ?? message.slice(0, 200) }
      : { program_error: 'TransactionFailed', program_error_message: (m?.[1] ?? message).slice(0, 200) };
  }
  return new DomainError('chain-transaction-failed', `${action}the transaction was rejected (${info.program_error})`, {
    ...info,
    ...(ctx.signature ? { signature: ctx.signature } : {}),
    ...(logs?.length ? { logs: logs.slice(-30) } : {}),
  });
}
