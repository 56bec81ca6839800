import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { ApiKeysRepository } from './repositories/api-keys.repository.js';
import { AppsRepository } from './repositories/apps.repository.js';
import { AuthTokensRepository } from './repositories/auth-tokens.repository.js';
import { CredentialCache } from './repositories/credential-cache.js';
import { GroupMembersRepository } from './repositories/group-members.repository.js';
import { GroupsRepository } from './repositories/groups.repository.js';
import { UsersRepository } from './repositories/users.repository.js';
import { ApiKeysService } from './services/api-keys.service.js';
import { AppsService } from './services/apps.service.js';
import { AuthTokensService } from './services/auth-tokens.service.js';
import { GroupMembersService } from './services/group-members.service.js';
import { GroupsService } from './services/groups.service.js';
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
  };
  const apiKeys = new ApiKeysService({ db, apiKeys: repositories.apiKeys });
  const apps = new AppsService({ db, apps: repositories.apps, apiKeys, region: config.region });
  const authTokens = new AuthTokensService({ db, authTokens: repositories.authTokens, users: repositories.users });
  const users = new UsersService({ db, users: repositories.users, authTokens });
  const groupDeps = { db, groups: repositories.groups, members: repositories.groupMembers, users: repositories.users, usersService: users };
  const groupMembers = new GroupMembersService(groupDeps);
  const groups = new GroupsService({ ...groupDeps, membersService: groupMembers });
  return { apps, apiKeys, authTokens, users, groups, groupMembers };
}

export type Services = ReturnType<typeof createServices>;
