import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { ApiKeysRepository } from './repositories/api-keys.repository.js';
import { AppsRepository } from './repositories/apps.repository.js';
import { AuthTokensRepository } from './repositories/auth-tokens.repository.js';
import { BlockedUsersRepository } from './repositories/blocked-users.repository.js';
import { ConversationsRepository } from './repositories/conversations.repository.js';
import { CredentialCache } from './repositories/credential-cache.js';
import { FriendsRepository } from './repositories/friends.repository.js';
import { GroupMembersRepository } from './repositories/group-members.repository.js';
import { GroupsRepository } from './repositories/groups.repository.js';
import { MessagesRepository } from './repositories/messages.repository.js';
import { PermissionsRepository } from './repositories/permissions.repository.js';
import { RolesRepository } from './repositories/roles.repository.js';
import { UsersRepository } from './repositories/users.repository.js';
import { ApiKeysService } from './services/api-keys.service.js';
import { AppsService } from './services/apps.service.js';
import { AuthTokensService } from './services/auth-tokens.service.js';
import { BlockedUsersService } from './services/blocked-users.service.js';
import { FriendsService } from './services/friends.service.js';
import { GroupMembersService } from './services/group-members.service.js';
import { GroupsService } from './services/groups.service.js';
import { MessagesService } from './services/messages.service.js';
import { RbacService } from './services/rbac.service.js';
import { RolesService } from './services/roles.service.js';
import { UsersService } from './services/users.service.js';

/** Composes database → repositories → services. Each service gets only what it uses. */
export function createServices(
  database: Database,
  config: Pick<Config, 'region'>,
  options: { credentialCacheTtlMs?: number } = {},
) {
  const db = database.db;
  const credentials = new CredentialCache(options.credentialCacheTtlMs ?? 5_000);
  const repositories = {
    apps: new AppsRepository(db, credentials),
    apiKeys: new ApiKeysRepository(db, credentials),
    users: new UsersRepository(db, (rows) => database.noteBulkWrite(rows)),
    authTokens: new AuthTokensRepository(db),
    groups: new GroupsRepository(db),
    groupMembers: new GroupMembersRepository(db),
    roles: new RolesRepository(db),
    permissions: new PermissionsRepository(db),
    friends: new FriendsRepository(db),
    blockedUsers: new BlockedUsersRepository(db),
    messages: new MessagesRepository(db),
    conversations: new ConversationsRepository(db),
  };
  const apiKeys = new ApiKeysService({ db, apiKeys: repositories.apiKeys, apps: repositories.apps });
  const apps = new AppsService({ db, apps: repositories.apps, apiKeys, roles: repositories.roles, region: config.region });
  const authTokens = new AuthTokensService({ db, authTokens: repositories.authTokens, users: repositories.users });
  const users = new UsersService({ db, users: repositories.users, blocks: repositories.blockedUsers, authTokens, roles: repositories.roles });
  const roles = new RolesService({ db, roles: repositories.roles });
  const rbac = new RbacService({ db, roles: repositories.roles, groups: repositories.groups, permissions: repositories.permissions });
  const groupDeps = { db, groups: repositories.groups, members: repositories.groupMembers, users: repositories.users, usersService: users, rbac };
  const groupMembers = new GroupMembersService(groupDeps);
  const groups = new GroupsService({ ...groupDeps, membersService: groupMembers });
  const socialDeps = { db, blocks: repositories.blockedUsers, users: repositories.users, usersService: users };
  const friends = new FriendsService({ ...socialDeps, friends: repositories.friends });
  const blockedUsers = new BlockedUsersService(socialDeps);
  const messages = new MessagesService({
    db,
    messages: repositories.messages,
    conversations: repositories.conversations,
    users: repositories.users,
    groups: repositories.groups,
    members: repositories.groupMembers,
    blocked: repositories.blockedUsers,
    usersService: users,
  });
  return { apps, apiKeys, authTokens, users, groups, groupMembers, friends, blockedUsers, roles, rbac, messages };
}

export type Services = ReturnType<typeof createServices>;
