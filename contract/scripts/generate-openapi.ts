/**
 * openapi.json and the route table of docs/design.md from the contract (the SDK ships no types generated
 * from openapi.json: its types are the contract's, see client-sdk/README.md "Package layout").
 *
 *   tsx contract/scripts/generate-openapi.ts           write openapi.json and docs/design.md's route table
 *   tsx contract/scripts/generate-openapi.ts --check   exit 1 when either is stale
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, serializeOpenApi } from './openapi.js';
import { withRouteTable } from './route-table.js';

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const OPENAPI_PATH = root('openapi.json');
const DESIGN_PATH = root('docs/design.md');

const readOr = (path: string) => readFile(path, 'utf8').catch(() => null);

async function main(args: string[]) {
  const doc = buildOpenApiDocument();
  const json = serializeOpenApi(doc);
  const designNow = (await readOr(DESIGN_PATH)) ?? '';
  const design = withRouteTable(designNow);
  if (args.includes('--check')) {
    const stale: string[] = [];
    if ((await readOr(OPENAPI_PATH)) !== json) stale.push('openapi.json');
    if (designNow !== design) stale.push('the route table of docs/design.md');
    if (stale.length) {
      console.error(
        `openapi:check failed: ${stale.join(' and ')} ${stale.length > 1 ? 'are' : 'is'} out of date with contract/src.\n` +
          'Run `npm run openapi:generate` and commit the result.',
      );
      process.exit(1);
    }
    console.log('openapi:check ok: openapi.json and the route table of docs/design.md match the contract');
    return;
  }
  await writeFile(OPENAPI_PATH, json);
  await writeFile(DESIGN_PATH, design);
  console.log(`wrote ${OPENAPI_PATH} and the route table of ${DESIGN_PATH}`);
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err);
  process.exit(1);
});
