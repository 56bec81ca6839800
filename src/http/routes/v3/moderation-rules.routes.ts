import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../container.js';
import { errorResponses } from '../../../schemas/common.schema.js';
import { CreateRuleBody, DeleteResponse, ModerationListQuery, RuleListResponse, RuleParams, RuleResponse, UpdateRuleBody } from '../../../schemas/moderation-rules.schema.js';

/** The page a moderation list asks for: `limit` and `page` come with the schema's defaults. */
export function moderationPage(query: { limit?: number; page?: number }): { limit: number; page: number } {
  if (query.limit === undefined || query.page === undefined) throw new Error('limit and page come from the ModerationListQuery schema defaults');
  return { limit: query.limit, page: query.page };
}

/**
 * Moderation rules. Like every moderation operation, they take the app's apiKey or, as the
 * vendor documents them, the deployment's management credential (`key` and `secret`, with the
 * app named by the host or the appId header).
 */
export const moderationRulesRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const rules = services.moderationRules;
  const tags = ['Moderation'];
  const config = { managementCredential: true };

  app.post(
    '/moderation/rules',
    {
      config,
      schema: {
        operationId: 'create-rule',
        tags,
        summary: 'Create Rule',
        description:
          'Creates a rule: its conditions (a message matching any one matches the rule) and actions. At most 25 per app besides the built-in rules. ' +
          'Word and pattern conditions on text and custom messages are evaluated; the others are stored and shown with `evaluated: false`.',
        body: CreateRuleBody,
        response: { 200: RuleResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await rules.create(request.ctx, request.body) }),
  );

  app.get(
    '/moderation/rules',
    {
      config,
      schema: {
        operationId: 'list-rules',
        tags,
        summary: 'List Rules',
        description: 'Lists the rules of the app, the built-in ones included, newest first (then by id).',
        querystring: ModerationListQuery,
        response: { 200: RuleListResponse, ...errorResponses },
      },
    },
    async (request) => rules.list(request.ctx, moderationPage(request.query)),
  );

  app.get(
    '/moderation/rules/:ruleId',
    {
      config,
      schema: {
        operationId: 'get-rule',
        tags,
        summary: 'Get Rule',
        description: 'Retrieves a rule.',
        params: RuleParams,
        response: { 200: RuleResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await rules.get(request.ctx, request.params.ruleId) }),
  );

  app.put(
    '/moderation/rules/:ruleId',
    {
      config,
      schema: {
        operationId: 'update-rule',
        tags,
        summary: 'Update Rule',
        description: 'Updates a rule: the fields given replace the rule’s (conditions and action whole). Each change is a new revision; an update that changes nothing makes none.',
        params: RuleParams,
        body: UpdateRuleBody,
        response: { 200: RuleResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await rules.update(request.ctx, request.params.ruleId, request.body) }),
  );

  app.delete(
    '/moderation/rules/:ruleId',
    {
      config,
      schema: {
        operationId: 'delete-rule',
        tags,
        summary: 'Delete Rule',
        description: 'Deletes a rule with its revisions. A deleted built-in rule is no longer listed nor applied; a rule of its id may be created afterwards.',
        params: RuleParams,
        response: { 200: DeleteResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await rules.delete(request.ctx, request.params.ruleId) }),
  );

  app.get(
    '/moderation/rules/:ruleId/revisions',
    {
      config,
      schema: {
        operationId: 'list-rule-revisions',
        tags,
        summary: 'List Rule Revisions',
        description: 'Lists the revisions of a rule, newest first; only the current one is `active`. A built-in rule’s first revision is the built-in.',
        params: RuleParams,
        querystring: ModerationListQuery,
        response: { 200: RuleListResponse, ...errorResponses },
      },
    },
    async (request) => rules.revisions(request.ctx, request.params.ruleId, moderationPage(request.query)),
  );
};
