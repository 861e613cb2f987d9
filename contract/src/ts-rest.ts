/**
 * `@bazaar/contract/ts-rest`: the ts-rest client runtime and types of the copy of @ts-rest/core this
 * contract is built with. @bazaar/client-sdk imports them from here instead of depending on
 * @ts-rest/core itself, so an app gets one copy of ts-rest and of zod 3 with the contract, even when
 * the app's own `zod` is version 4 (npm then nests both under @bazaar/contract).
 */
export { initClient } from '@ts-rest/core';
export type { ApiFetcher, ApiFetcherArgs, AppRoute, AppRouter, InitClientReturn } from '@ts-rest/core';
