/**
 * `client-sdk/examples/kit-buy.ts` buys a listing with @solana/kit only (issue 26 item 2): its real module
 * graph, bundled by esbuild with the repository's tsconfig paths (the SDK and the escrow client from their
 * sources), holds no file of @solana/web3.js. The graph is not vacuous (Kit, the generated escrow client and
 * the SDK's verifier are in it), and the same walk over the example plus one web3.js import finds it. The
 * SDK's main, lite and login entries stay lean: Kit and the escrow client come only with `/verify`.
 */
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLE = 'client-sdk/examples/kit-buy.ts';

/** Every input file esbuild bundles for `entry` (paths relative to the repository root). */
async function moduleGraph(entry: Pick<BuildOptions, 'entryPoints' | 'stdin'>): Promise<string[]> {
  const result = await build({
    ...entry,
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    outdir: 'kit-buy-graph-out', // nothing is written (write: false)
    tsconfig: 'tsconfig.json',
    logLevel: 'silent',
  });
  return Object.keys(result.metafile!.inputs);
}

const web3Files = (graph: string[]) => graph.filter((p) => /(^|\/)node_modules\/@solana\/web3\.js\//.test(p));

describe('client-sdk/examples/kit-buy.ts', () => {
  it('has no @solana/web3.js in its import graph (Kit, the escrow client and the SDK verifier are in it)', async () => {
    const graph = await moduleGraph({ entryPoints: [EXAMPLE] });
    expect(web3Files(graph)).toEqual([]);
    expect(graph).toContain(EXAMPLE);
    expect(graph).toContain('client-sdk/src/verify.ts');
    expect(graph).toContain('programs/escrow/clients/js/src/generated/instructions/fundMilestone.ts');
    expect(graph.some((p) => p.includes('node_modules/@solana/kit/'))).toBe(true);
  });

  it('the SDK\'s main, lite and login entries stay without Kit and the escrow client (only /verify loads them)', async () => {
    for (const entry of ['client-sdk/src/index.ts', 'client-sdk/src/lite.ts', 'client-sdk/src/login.ts']) {
      const graph = await moduleGraph({ entryPoints: [entry] });
      expect(graph.filter((p) => p.startsWith('programs/escrow/clients/js/') || /node_modules\/@solana\/(kit|addresses|transactions|transaction-messages|codecs[\w-]*)\//.test(p)), entry).toEqual([]);
    }
  });

  it('the same walk finds @solana/web3.js when the example imports it', async () => {
    const graph = await moduleGraph({
      stdin: { contents: `import './kit-buy.ts';\nimport { Connection } from '@solana/web3.js';\nconsole.log(Connection);\n`, resolveDir: `${ROOT}client-sdk/examples`, sourcefile: 'kit-buy-with-web3.ts', loader: 'ts' },
    });
    expect(web3Files(graph).length).toBeGreaterThan(0);
  });
});
