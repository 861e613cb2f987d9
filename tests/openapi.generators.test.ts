/**
 * A third party's client generator on openapi.json: @hey-api/openapi-ts (pinned devDependency) writes a
 * fetch client into a temp directory, which compiles (strict); its types have no `...2` duplicates (a
 * component named like an operation's own type), reuse Order for createOrder's answer and type
 * Problem.type as the union of the documented problem types. openapi-typescript (pinned devDependency)
 * writes its types, which a small program compiles against (strict). orval was checked by hand
 * (contract/README.md).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemTypes, problemTypeUri, type ProblemSlug } from '@bazaar/contract';

const run = promisify(execFile);
const root = (p: string) => fileURLToPath(new URL(`../${p}`, import.meta.url));

describe('@hey-api/openapi-ts on openapi.json', () => {
  let dir = '';
  let types = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bazaar-hey-api-'));
    await run(process.execPath, [root('node_modules/@hey-api/openapi-ts/bin/run.js'), '-i', root('openapi.json'), '-o', join(dir, 'client')], {
      env: { ...process.env, NO_COLOR: '1' },
    });
    types = await readFile(join(dir, 'client', 'types.gen.ts'), 'utf8');
  }, 120_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('emits no numbered duplicate type (e.g. RequestLoginResponse2)', () => {
    expect(types.match(/^export type \w+\d+ =/gm) ?? []).toEqual([]);
  });

  it('types the createOrder answer as Order plus payment, and Problem.type as the documented types', () => {
    expect(types).toMatch(/export type OrderWithPayment = Order & \{\s*payment: OrderPayment \| null;/);
    expect(types).toMatch(/export type CreateOrderResponses = \{[^}]*201: OrderWithPayment;/);
    const problemType = types.match(/export type Problem = \{[\s\S]*?\n {4}type: ([^;]+);/)?.[1] ?? '';
    for (const slug of Object.keys(problemTypes)) expect(problemType).toContain(`'${problemTypeUri(slug as ProblemSlug)}'`);
  });

  it('generates a client that compiles (strict)', async () => {
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'bundler',
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          types: [],
          strict: true,
          noEmit: true,
        },
        include: ['client'],
      }),
    );
    const result = await run(process.execPath, [root('node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')]).then(
      () => '',
      (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
    );
    expect(result).toBe('');
  }, 120_000);
});

/**
 * openapi-typescript on openapi.json: what a TypeScript program that does not use this SDK runs (the SDK
 * shipped these types in its main entry until it kept only the contract's, client-sdk/README.md). Every
 * operation of the document is in its `operations`, and a program reading a search answer and a problem
 * through them compiles (strict).
 */
describe('openapi-typescript on openapi.json', () => {
  let dir = '';
  let schema = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bazaar-openapi-typescript-'));
    const { default: openapiTS, astToString } = await import('openapi-typescript');
    schema = astToString(await openapiTS(JSON.parse(await readFile(root('openapi.json'), 'utf8'))));
    await writeFile(join(dir, 'schema.ts'), schema);
  }, 120_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('types every operation of the document', async () => {
    const doc = JSON.parse(await readFile(root('openapi.json'), 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId).filter(Boolean));
    expect(ids.length).toBeGreaterThan(50);
    const declared = [...(schema.match(/^export interface operations \{[\s\S]*?^\}/m)?.[0] ?? '').matchAll(/^ {4}"?([\w.]+)"?: \{$/gm)].map((m) => m[1]);
    expect(declared.sort()).toEqual([...ids].sort());
  });

  it('compiles with a program reading a search answer and a problem (strict)', async () => {
    await writeFile(
      join(dir, 'use.ts'),
      `import type { components, paths } from './schema';
type Search = paths['/api/v1/marketplace/search']['get']['responses'][200]['content']['application/json'];
export const titles = (s: Search): string[] => s.data.map((l) => l.title);
export const isNotFound = (p: components['schemas']['Problem']): boolean => p.type === 'https://bazaar.dev/problems/not-found';
`,
    );
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', lib: ['ES2022'], types: [], strict: true, noEmit: true }, include: ['*.ts'] }),
    );
    const result = await run(process.execPath, [root('node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')]).then(
      () => '',
      (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
    );
    expect(result).toBe('');
  }, 120_000);
});
