/**
 * Log a fresh wallet in over SIWS and print its access token (JWT) on stdout: a credential for tools
 * that drive the API from outside. Development only: the wallet is
 * generated, used once and forgotten.
 *
 *   BAZAAR_URL=http://127.0.0.1:3000 npx tsx server/scripts/dev-login.ts
 */
import { Keypair } from '@solana/web3.js';
import { keypairSigner } from '@bazaar/client-sdk/keypair';
import { loginWithWallet } from '@bazaar/client-sdk/login';
import { loadToolConfig } from '../src/config.js';

const { baseUrl } = loadToolConfig(process.env);
const { token, user } = await loginWithWallet(baseUrl, keypairSigner(Keypair.generate().secretKey));
process.stderr.write(`logged in as ${user.wallet}\n`);
process.stdout.write(`${token}\n`);
