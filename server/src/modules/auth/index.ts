export { createAuthService, credentialKey, defaultSiwsDomain, hasRole, rolesOfUser, type AuthService, type AccessPrincipal, type Principal, type AuthSettings } from './auth.service.js';
export { createRolesService, grantRoleToWallet, type RolesService } from './roles.js';
export { createAuthRepo, type AuthRepo } from './auth.repo.js';
export { authErrors } from './auth.errors.js';
export { createApiKey, listApiKeys, revokeApiKey, hashApiKey, API_KEY_PREFIX } from './api-keys.js';
export { signAccessToken, verifyAccessToken } from './tokens.js';
export { SIWS_STATEMENT, checkSignedMessage, domainAllowed, newNonce, normalizeChainId, parseRfc3339, signedBy, signInInputFor } from './siws.js';
export { createTokensService, presentToken, PAT_PREFIX, type TokensService } from './personal-tokens.js';
export { credentialSignal, notifyCredentialChanged } from './revocation.js';
