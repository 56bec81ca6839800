import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../../container.js';
import { installAuth } from '../../plugins/auth.js';
import { installQueryAliases } from '../../plugins/query-aliases.js';
import { installRateLimits } from '../../plugins/rate-limit.js';
import type { TenancySettings } from '../../plugins/tenancy.js';
import { apiKeysRoutes } from './api-keys.routes.js';
import { authTokensRoutes } from './auth-tokens.routes.js';
import { blockedUsersRoutes } from './blocked-users.routes.js';
import { clientRoutes } from './client.routes.js';
import { conversationsRoutes } from './conversations.routes.js';
import { eventsRoutes } from './events.routes.js';
import { friendsRoutes } from './friends.routes.js';
import { groupMembersRoutes } from './group-members.routes.js';
import { groupsRoutes } from './groups.routes.js';
import { messageEditsRoutes } from './message-edits.routes.js';
import { moderationBlockedRoutes } from './moderation-blocked.routes.js';
import { messagesRoutes } from './messages.routes.js';
import { notificationsRoutes } from './notifications/index.js';
import { moderationFlagsRoutes } from './moderation-flags.routes.js';
import { moderationHookRoutes } from './moderation-hook.routes.js';
import { moderationKeywordsRoutes } from './moderation-keywords.routes.js';
import { moderationRulesRoutes } from './moderation-rules.routes.js';
import { reactionsRoutes } from './reactions.routes.js';
import { rateLimitsRoutes } from './rate-limits.routes.js';
import { rbacRoutes } from './rbac.routes.js';
import { rolesRoutes } from './roles.routes.js';
import { statsRoutes } from './stats.routes.js';
import { threadsRoutes } from './threads.routes.js';
import { usersRoutes } from './users.routes.js';

/**
 * The general API, `/v3`. Every route module is listed here, so the whole vendor surface can
 * be audited in one place against the specs (docs/compatibility.md lists what is not here).
 */
export const V3_ROUTE_MODULES = [
  usersRoutes,
  authTokensRoutes,
  apiKeysRoutes,
  groupsRoutes,
  groupMembersRoutes,
  friendsRoutes,
  blockedUsersRoutes,
  rolesRoutes,
  rbacRoutes,
  messagesRoutes,
  threadsRoutes,
  reactionsRoutes,
  messageEditsRoutes,
  conversationsRoutes,
  rateLimitsRoutes,
  statsRoutes,
  eventsRoutes,
  moderationFlagsRoutes,
  moderationRulesRoutes,
  moderationKeywordsRoutes,
  moderationBlockedRoutes,
  moderationHookRoutes,
  notificationsRoutes,
  // Parley's own: the REST half of a client SDK's session (docs/client-api.md).
  clientRoutes,
];

/**
 * The general API's routes under the scope's prefix. `hidden`: left out of the OpenAPI document
 * (the same API under `/v3.0`, where the vendor's client SDKs call it).
 */
export const v3Routes: FastifyPluginAsync<{ services: Services; tenancy: TenancySettings; rateLimited?: boolean; hidden?: boolean }> = async (app, options) => {
  if (options.hidden) app.addHook('onRoute', (route) => void (route.schema = Object.assign({}, route.schema, { hide: true })));
  // The vendor's SDK pages with `per_page` (query-aliases.ts).
  installQueryAliases(app);
  installAuth(app, options.services, options.tenancy);
  if (options.rateLimited !== false) installRateLimits(app, options.services.rateLimits);
  for (const routes of V3_ROUTE_MODULES) await app.register(routes, { services: options.services });
};
