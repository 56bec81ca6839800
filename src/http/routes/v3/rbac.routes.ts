import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../container.js';
import { errorResponses } from '../../../schemas/common.schema.js';
import {
  PermissionListResponse,
  RoleParams,
  RolePermissionParams,
  ScopeParams,
  ScopePermissionParams,
  SetPermissionsBody,
  SetRolePermissionsResponse,
  SetScopePermissionsResponse,
  UnsetPermissionResponse,
} from '../../../schemas/roles.schema.js';

/** RBAC: permissions per role (app-wide) and per group scope (SBAC). */
export const rbacRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const rbac = services.rbac;
  const tags = ['RBAC'];

  app.get(
    '/roles/:role/permissions',
    {
      schema: {
        operationId: 'list-role-permissions',
        tags,
        summary: 'List Role Permissions',
        description: 'Lists every role permission with its default and the value in force for the role.',
        params: RoleParams,
        response: { 200: PermissionListResponse, ...errorResponses },
      },
    },
    async (request) => rbac.listRolePermissions(request.ctx, request.params.role),
  );

  app.put(
    '/roles/:role/permissions',
    {
      schema: {
        operationId: 'set-role-permissions',
        tags,
        summary: 'Set Role Permissions',
        description: 'Sets permissions of a role; one unknown key or bad value refuses the whole call.',
        params: RoleParams,
        body: SetPermissionsBody,
        response: { 200: SetRolePermissionsResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await rbac.setRolePermissions(request.ctx, request.params.role, request.body.permissions) }),
  );

  app.delete(
    '/roles/:role/permissions/:permission',
    {
      schema: {
        operationId: 'unset-role-permissions',
        tags,
        summary: 'Unset Role Permissions',
        description: 'Unsets a permission of a role: its default applies again.',
        params: RolePermissionParams,
        response: { 200: UnsetPermissionResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await rbac.unsetRolePermission(request.ctx, request.params.role, request.params.permission) }),
  );

  app.get(
    '/groups/:guid/scopes/:scope/permissions',
    {
      schema: {
        operationId: 'list-scope-permissions',
        tags,
        summary: 'List Scope Permissions',
        description: 'Lists every scope permission with its default and the value in force for the scope in the group.',
        params: ScopeParams,
        response: { 200: PermissionListResponse, ...errorResponses },
      },
    },
    async (request) => rbac.listScopePermissions(request.ctx, request.params.guid, request.params.scope),
  );

  app.put(
    '/groups/:guid/scopes/:scope/permissions',
    {
      schema: {
        operationId: 'set-scope-permissions',
        tags,
        summary: 'Set Scope Permissions',
        description: 'Sets permissions of a scope in a group; one unknown key or bad value refuses the whole call.',
        params: ScopeParams,
        body: SetPermissionsBody,
        response: { 200: SetScopePermissionsResponse, ...errorResponses },
      },
    },
    async (request) => ({
      data: await rbac.setScopePermissions(request.ctx, request.params.guid, request.params.scope, request.body.permissions),
    }),
  );

  app.delete(
    '/groups/:guid/scopes/:scope/permissions/:permission',
    {
      schema: {
        operationId: 'unset-scope-permissions',
        tags,
        summary: 'Unset Scope Permissions',
        description: 'Unsets a permission of a scope in a group: its default applies again.',
        params: ScopePermissionParams,
        response: { 200: UnsetPermissionResponse, ...errorResponses },
      },
    },
    async (request) => ({
      data: await rbac.unsetScopePermission(request.ctx, request.params.guid, request.params.scope, request.params.permission),
    }),
  );
};
