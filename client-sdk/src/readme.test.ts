import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const sdk = (p: string) => fileURLToPath(new URL(`../${p}`, import.meta.url));

describe('client-sdk README', () => {
  it.each(['examples/quickstart.ts', 'examples/browser.ts', 'examples/events.ts', 'examples/milestones.ts', 'examples/kit-buy.ts'])('shows %s verbatim in a ts code block', async (file) => {
    const [readme, example] = await Promise.all([readFile(sdk('README.md'), 'utf8'), readFile(sdk(file), 'utf8')]);
    expect(readme).toContain('```ts\n' + example + '```');
  });

  it('has an example that typechecks against the SDK', async () => {
    const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
    const run = promisify(execFile);
    const result = await run(process.execPath, [tsc, '-p', sdk('tsconfig.examples.json')]).then(
      () => '',
      (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
    );
    expect(result).toBe('');
    // one tsc run over every example: kit-buy.ts adds @solana/kit's declarations (≈500 files; 39 s -> 60 s
    // on 2 loaded cores), past the default 60 s
  }, 180_000);
});
