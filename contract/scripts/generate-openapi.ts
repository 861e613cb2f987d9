/**
 * openapi.json, the route table of docs/design.md and the SDK's route table (client-sdk/src/routes.generated.ts,
 * methods and paths for `@bazaar/client-sdk/lite`) from the contract (the SDK ships no types generated from
 * openapi.json: its types are the contract's, see client-sdk/README.md "Package layout").
 *
 *   tsx contract/scripts/generate-openapi.ts           write the three
 *   tsx contract/scripts/generate-openapi.ts --check   exit 1 when one is stale
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, serializeOpenApi } from './openapi.js';
import { withRouteTable } from './route-table.js';
import { sdkRouteTable } from './sdk-routes.js';

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const OPENAPI_PATH = root('openapi.json');
const DESIGN_PATH = root('docs/design.md');
const SDK_ROUTES_PATH = root('client-sdk/src/routes.generated.ts');

const readOr = (path: string) => readFile(path, 'utf8').catch(() => null);

async function main(args: string[]) {
  const doc = buildOpenApiDocument();
  const json = serializeOpenApi(doc);
  const designNow = (await readOr(DESIGN_PATH)) ?? '';
  const design = withRouteTable(designNow);
  const sdkRoutes = sdkRouteTable();
  if (args.includes('--check')) {
    const stale: string[] = [];
    if ((await readOr(OPENAPI_PATH)) !== json) stale.push('openapi.json');
    if (designNow !== design) stale.push('the route table of docs/design.md');
    if ((await readOr(SDK_ROUTES_PATH)) !== sdkRoutes) stale.push('client-sdk/src/routes.generated.ts');
    if (stale.length) {
      console.error(
        `openapi:check failed: ${stale.join(' and ')} ${stale.length > 1 ? 'are' : 'is'} out of date with contract/src.\n` +
          'Run `npm run openapi:generate` and commit the result.',
      );
      process.exit(1);
    }
    console.log('openapi:check ok: openapi.json, the route table of docs/design.md and the SDK\'s route table match the contract');
    return;
  }
  await writeFile(OPENAPI_PATH, json);
  await writeFile(DESIGN_PATH, design);
  await writeFile(SDK_ROUTES_PATH, sdkRoutes);
  console.log(`wrote ${OPENAPI_PATH}, the route table of ${DESIGN_PATH} and ${SDK_ROUTES_PATH}`);
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err);
  process.exit(1);
});
