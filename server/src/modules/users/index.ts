export { createUsersService, type UsersService, type UserStatsPorts } from './users.service.js';
export { createUsersRepo, type UsersRepo } from './users.repo.js';
