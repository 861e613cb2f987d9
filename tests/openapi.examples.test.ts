/**
 * Every example in openapi.json is a value the service accepts (what /docs pre-fills in "Try it out"):
 * each schema example parses with the contract's zod schema it documents (so a Pubkey example is base58 of
 * 32 bytes, a TxSignature of 64), category and currency examples are configured by default, and the sign-in
 * examples are a real SIWS message with a valid signature. Problem examples: contract/src/openapi.test.ts.
 */
import { createSignInMessage } from '@solana/wallet-standard-util';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { contract, Pubkey, SignInInput, TxSignature, VerifyLoginBody } from '@bazaar/contract';
import { buildOpenApiDocument } from '../contract/scripts/openapi.js';
import { DEFAULT_CATEGORIES } from '../server/src/config.js';
import { testConfig } from './helpers/app.js';

const doc = buildOpenApiDocument(); // also gives copies (e.g. Pubkey.describe(...)) the metadata they inherit
const exampleOf = (schema: z.ZodTypeAny) => (schema as { metaOpenApi?: { example?: string } }).metaOpenApi!.example!;

/** Every zod schema reachable from the contract that carries an example, with the path it was found at. */
function schemasWithExamples(): { path: string; schema: z.ZodTypeAny; example: unknown }[] {
  const found: { path: string; schema: z.ZodTypeAny; example: unknown }[] = [];
  const seen = new Set<unknown>();
  const visit = (node: unknown, path: string): void => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (!(node instanceof z.ZodType)) {
      for (const [k, v] of Object.entries(node)) visit(v, `${path}.${k}`);
      return;
    }
    const meta = (node as { metaOpenApi?: { example?: unknown } }).metaOpenApi;
    if (meta && 'example' in meta) found.push({ path, schema: node, example: meta.example });
    for (const [k, v] of Object.entries(node._def as Record<string, unknown>)) {
      if (k === 'shape' && typeof v === 'function') for (const [f, s] of Object.entries(v())) visit(s, `${path}.${f}`);
      else if (typeof v === 'object') visit(v, path);
    }
  };
  visit(contract, 'contract');
  return found;
}

describe('OpenAPI examples', () => {
  const examples = schemasWithExamples();

  it('finds the examples of the shared scalars, including on described copies', () => {
    const paths = examples.map((e) => e.path);
    expect(paths.length).toBeGreaterThan(30);
    // Pubkey.describe('Wallet that will sign in'): an example only since copies inherit metadata
    expect(paths).toContain('contract.auth.requestLogin.body.address');
    expect(doc.components.schemas.RequestLoginBody.properties.address.example).toBe(exampleOf(Pubkey));
  });

  it.each(examples.map((e) => [e.path, e]))('%s: the example parses with its schema', (_path, { schema, example }) => {
    expect(schema.safeParse(example).success).toBe(true);
  });

  it('uses categories and currencies the service has by default', () => {
    const currencies = testConfig().currencies.map((c) => c.code);
    const at = (suffix: RegExp) => examples.filter((e) => suffix.test(e.path));
    const categoryExamples = at(/\.(category|slug)$/);
    const currencyExamples = at(/\.(currency|code)$/);
    expect(categoryExamples.length).toBeGreaterThan(0);
    expect(currencyExamples.length).toBeGreaterThan(0);
    for (const { path, example } of categoryExamples) expect(DEFAULT_CATEGORIES, path).toContain(example);
    for (const { path, example } of currencyExamples) expect(currencies, path).toContain(example);
    expect(bs58.decode(exampleOf(Pubkey)).length).toBe(32);
    expect(bs58.decode(exampleOf(TxSignature)).length).toBe(64);
  });

  it('signs in with a real SIWS message and a valid signature in the sign-in examples', () => {
    const input = SignInInput.parse(doc.components.schemas.SignInInput.example);
    const body = VerifyLoginBody.parse(doc.components.schemas.VerifyLoginBody.example);
    expect(body.address).toBe(input.address);
    const message = Buffer.from(body.signed_message, 'base64');
    expect(new Uint8Array(message)).toEqual(createSignInMessage(input));
    const signature = Buffer.from(body.signature, 'base64');
    expect(nacl.sign.detached.verify(message, signature, bs58.decode(body.address))).toBe(true);
  });
});
