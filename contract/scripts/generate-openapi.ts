/**
 * openapi.json, client-sdk/src/openapi-types.ts and the route table of docs/design.md from the contract.
 *
 *   tsx contract/scripts/generate-openapi.ts           write openapi.json (+ SDK types, + docs/design.md's route table)
 *   tsx contract/scripts/generate-openapi.ts --types   write client-sdk/src/openapi-types.ts from openapi.json
 *   tsx contract/scripts/generate-openapi.ts --check   exit 1 when any of them is stale
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, buildSdkTypes, serializeOpenApi } from './openapi.js';
import { withRouteTable } from './route-table.js';

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const OPENAPI_PATH = root('openapi.json');
const SDK_TYPES_PATH = root('client-sdk/src/openapi-types.ts');
const DESIGN_PATH = root('docs/design.md');

const readOr = (path: string) => readFile(path, 'utf8').catch(() => null);

async function main(args: string[]) {
  if (args.includes('--types')) {
    const doc = JSON.parse((await readOr(OPENAPI_PATH)) ?? 'null');
    if (!doc) throw new Error('openapi.json is missing; run npm run openapi:generate');
    await writeFile(SDK_TYPES_PATH, await buildSdkTypes(doc));
    console.log(`wrote ${SDK_TYPES_PATH}`);
    return;
  }
  const doc = buildOpenApiDocument();
  const json = serializeOpenApi(doc);
  const types = await buildSdkTypes(JSON.parse(json));
  const designNow = (await readOr(DESIGN_PATH)) ?? '';
  const design = withRouteTable(designNow);
  if (args.includes('--check')) {
    const stale: string[] = [];
    if ((await readOr(OPENAPI_PATH)) !== json) stale.push('openapi.json');
    if ((await readOr(SDK_TYPES_PATH)) !== types) stale.push('client-sdk/src/openapi-types.ts');
    if (designNow !== design) stale.push('the route table of docs/design.md');
    if (stale.length) {
      console.error(
        `openapi:check failed: ${stale.join(' and ')} ${stale.length > 1 ? 'are' : 'is'} out of date with contract/src.\n` +
          'Run `npm run openapi:generate` and commit the result.',
      );
      process.exit(1);
    }
    console.log('openapi:check ok: openapi.json, client-sdk/src/openapi-types.ts and the route table of docs/design.md match the contract');
    return;
  }
  await writeFile(OPENAPI_PATH, json);
  await writeFile(SDK_TYPES_PATH, types);
  await writeFile(DESIGN_PATH, design);
  console.log(`wrote ${OPENAPI_PATH}, ${SDK_TYPES_PATH} and the route table of ${DESIGN_PATH}`);
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err);
  process.exit(1);
});
