/**
 * Test harness for `bazaar-localnet`: the launcher lives beside the main job (`npm start` uses it
 * too), see server/scripts/localnet-process.ts.
 */
export * from '../../server/scripts/localnet-process';
