/** ts-rest handlers of `contract.network` (public: GET /network). */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { networkInfo, type NetworkSettings } from '../modules/network/index.js';

export function networkHandlers(settings: NetworkSettings) {
  const info = networkInfo(settings);
  const s = initServer();
  return s.router(contract.network, {
    getNetwork: async () => ({ status: 200 as const, body: info }),
  });
}
