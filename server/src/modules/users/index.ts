export { createUsersService, type UsersService, reputationOf } from './users.service.js';
export { createUsersRepo, type UsersRepo } from './users.repo.js';
