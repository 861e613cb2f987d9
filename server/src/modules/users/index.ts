export { createUsersService, type UsersService, reputationOf, uiAmount } from './users.service.js';
export { createUsersRepo, type UsersRepo } from './users.repo.js';
