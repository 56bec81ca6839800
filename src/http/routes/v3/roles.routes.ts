import { pageOf } from './paging.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../container.js';
import { errorResponses } from '../../../schemas/common.schema.js';
import {
  AllowFeaturesBody,
  AllowFeaturesResponse,
  CreateRoleBody,
  ListRolesQuery,
  RestrictedFeatureListResponse,
  RestrictFeaturesBody,
  RestrictFeaturesResponse,
  RoleDeleteResponse,
  RoleListResponse,
  RoleParams,
  RoleResponse,
  UpdateRoleBody,
} from '../../../schemas/roles.schema.js';

/** Roles and Restrict Features. */
export const rolesRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const roles = services.roles;
  const tags = ['Roles'];

  app.post(
    '/roles',
    {
      schema: {
        operationId: 'create-role',
        tags,
        summary: 'Create',
        description: `Creates a role; at most 25 per app, the default role included.`,
        body: CreateRoleBody,
        response: { 200: RoleResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await roles.create(request.ctx, request.body) }),
  );

  app.get(
    '/roles',
    {
      schema: {
        operationId: 'list-roles',
        tags,
        summary: 'List',
        description: 'Lists the roles of the app, the default role included, in role id order.',
        querystring: ListRolesQuery,
        response: { 200: RoleListResponse, ...errorResponses },
      },
    },
    async (request) => roles.list(request.ctx, pageOf(request.query)),
  );

  app.get(
    '/roles/:role',
    {
      schema: {
        operationId: 'get-role',
        tags,
        summary: 'Get',
        description: 'Retrieves a role.',
        params: RoleParams,
        response: { 200: RoleResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await roles.get(request.ctx, request.params.role) }),
  );

  app.put(
    '/roles/:role',
    {
      schema: {
        operationId: 'update-role',
        tags,
        summary: 'Update',
        description: 'Updates a role; `unset` removes settings, description or metadata.',
        params: RoleParams,
        body: UpdateRoleBody,
        response: { 200: RoleResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await roles.update(request.ctx, request.params.role, request.body) }),
  );

  app.delete(
    '/roles/:role',
    {
      schema: {
        operationId: 'delete-role',
        tags,
        summary: 'Delete',
        description: 'Deletes a role with its restricted features and permissions. The default role, and a role users hold, cannot be deleted.',
        params: RoleParams,
        response: { 200: RoleDeleteResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await roles.delete(request.ctx, request.params.role) }),
  );

  const featureTags = ['Restrict Features'];

  app.post(
    '/roles/:role/restrictedfeatures',
    {
      schema: {
        operationId: 'restrict-features',
        tags: featureTags,
        summary: 'Restrict Features',
        description: 'Restricts features for a role (stored and listed; see docs/compatibility.md).',
        params: RoleParams,
        body: RestrictFeaturesBody,
        response: { 200: RestrictFeaturesResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await roles.restrictFeatures(request.ctx, request.params.role, request.body.featuresToRestrict) }),
  );

  app.get(
    '/roles/:role/restrictedfeatures',
    {
      schema: {
        operationId: 'get-restrictedfeatures',
        tags: featureTags,
        summary: 'List Restricted Features',
        description: 'Lists the features restricted for a role, in key order.',
        params: RoleParams,
        response: { 200: RestrictedFeatureListResponse, ...errorResponses },
      },
    },
    async (request) => roles.listRestrictedFeatures(request.ctx, request.params.role),
  );

  app.delete(
    '/roles/:role/restrictedfeatures',
    {
      schema: {
        operationId: 'allow-features',
        tags: featureTags,
        summary: 'Allow Features',
        description: 'Allows restricted features again: those in `featuresToAllow`, or all with `allowAll`.',
        params: RoleParams,
        body: AllowFeaturesBody,
        response: { 200: AllowFeaturesResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await roles.allowFeatures(request.ctx, request.params.role, request.body ?? {}) }),
  );
};
