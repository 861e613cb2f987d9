export * from './idempotency.middleware.js';
export * from './idempotency.store.js';
export { idempotencyErrors } from './idempotency.errors.js';
export { PrismaIdempotencyStore } from './idempotency.repo.js';
