#!/usr/bin/env node
// Generates the Kit client of the escrow program (@bazaar/escrow-client) from the committed IDL with
// Codama, the way `codama run js` does (rootNodeFromAnchor + renderers-js), into src/generated/.
//
//   node programs/escrow/clients/js/scripts/generate.mjs           writes src/generated/ (npm run escrow-client:generate)
//   node programs/escrow/clients/js/scripts/generate.mjs --check   exits 1 when src/generated/ is stale (npm run escrow-client:check)
//
// After a program change: `npm run idl:build` (the IDL), then `npm run escrow-client:generate` (this client).
// The generator versions are pinned exactly in the root package.json (codama, @codama/nodes-from-anchor,
// @codama/renderers-js): the generated text depends on them (and on their Prettier), so the check is exact.
// syncPackageJson is off: the client's dependencies are pinned by hand in its package.json.
// One step after rendering: renderers-js writes extensionless relative imports ("../pdas"), which only a
// bundler resolves; they are rewritten to the explicit ESM specifiers Node and TypeScript's NodeNext
// resolution need ("../pdas/index.js", "./fund.js"), so `tsc` builds dist/ that Node imports as it is.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFromRoot } from 'codama';
import { rootNodeFromAnchor } from '@codama/nodes-from-anchor';
import { renderVisitor } from '@codama/renderers-js';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const idlFile = resolve(packageDir, '../../idl/escrow.json');
const generatedFolder = 'src/generated';
const check = process.argv.includes('--check');

/** Render the client from the IDL into `<dir>/src/generated` (the folder is emptied first). */
async function render(dir) {
  const idl = JSON.parse(readFileSync(idlFile, 'utf8'));
  const codama = createFromRoot(rootNodeFromAnchor(idl));
  await codama.accept(renderVisitor(dir, { generatedFolder, syncPackageJson: false, deleteFolderBeforeRendering: true, kitImportStrategy: 'granular' }));
  const root = join(dir, generatedFolder);
  for (const file of files(root)) {
    const path = join(root, file);
    const text = readFileSync(path, 'utf8').replace(/(from\s+")(\.{1,2}\/[^"]*)(")/g, (_, open, spec, close) => {
      const target = resolve(dirname(path), spec);
      const explicit = existsSync(target) && statSync(target).isDirectory() ? `${spec}/index.js` : `${spec}.js`;
      return open + explicit + close;
    });
    writeFileSync(path, text);
  }
}

/** Every file under `dir`, as paths relative to it, sorted. */
function files(dir, base = dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path, base) : [relative(base, path)];
    })
    .sort();
}

if (!check) {
  await render(packageDir);
  console.log(`escrow-client: wrote ${files(join(packageDir, generatedFolder)).length} files to ${relative(process.cwd(), join(packageDir, generatedFolder))}`);
} else {
  const tmp = mkdtempSync(join(tmpdir(), 'bazaar-escrow-client-'));
  try {
    await render(tmp);
    const want = join(tmp, generatedFolder);
    const have = join(packageDir, generatedFolder);
    const wantFiles = files(want);
    const haveFiles = files(have);
    const stale = [
      ...wantFiles.filter((f) => !haveFiles.includes(f) || readFileSync(join(want, f), 'utf8') !== readFileSync(join(have, f), 'utf8')),
      ...haveFiles.filter((f) => !wantFiles.includes(f)),
    ];
    if (stale.length) {
      console.error(`escrow-client: ${relative(process.cwd(), have)} is stale against programs/escrow/idl/escrow.json (${stale.join(', ')}); run npm run escrow-client:generate`);
      process.exit(1);
    }
    console.log(`escrow-client: ${wantFiles.length} generated files up to date`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
