/** Validates openapi.json against the OpenAPI 3.0 schema with @apidevtools/swagger-parser. */
import SwaggerParser from '@apidevtools/swagger-parser';
import { fileURLToPath } from 'node:url';

const path = fileURLToPath(new URL('../../openapi.json', import.meta.url));

SwaggerParser.validate(path).then(
  (api) => console.log(`swagger-parser: ${path} is a valid OpenAPI ${(api as { openapi?: string }).openapi} document`),
  (err: Error) => {
    console.error(`swagger-parser: ${path} is invalid:\n${err.message}`);
    process.exit(1);
  },
);
