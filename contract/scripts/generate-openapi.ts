/**
 * openapi.json from the contract.
 *
 *   tsx contract/scripts/generate-openapi.ts           write openapi.json
 *   tsx contract/scripts/generate-openapi.ts --check   exit 1 when it is stale
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, serializeOpenApi } from './openapi.js';

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const OPENAPI_PATH = root('openapi.json');

const readOr = (path: string) => readFile(path, 'utf8').catch(() => null);

async function main(args: string[]) {
  const doc = buildOpenApiDocument();
  const json = serializeOpenApi(doc);
  if (args.includes('--check')) {
    if ((await readOr(OPENAPI_PATH)) !== json) {
      console.error('openapi:check failed: openapi.json is out of date with contract/src.\nRun `npm run openapi:generate` and commit the result.');
      process.exit(1);
    }
    console.log('openapi:check ok: openapi.json matches the contract');
    return;
  }
  await writeFile(OPENAPI_PATH, json);
  console.log(`wrote ${OPENAPI_PATH}`);
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err);
  process.exit(1);
});
