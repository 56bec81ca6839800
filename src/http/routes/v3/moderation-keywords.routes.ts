import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Services } from '../../../container.js';
import { AppError, badRequest } from '../../../domain/errors.js';
import { MODERATION_LIMITS } from '../../../domain/moderation/rules.js';
import { findUnstorable } from '../../../domain/text.js';
import { errorResponses } from '../../../schemas/common.schema.js';
import {
  CreateKeywordListBody,
  CreateKeywordListForm,
  DeleteResponse,
  KeywordListListResponse,
  KeywordListResponse,
  KeywordParams,
  ModerationListQuery,
  UpdateKeywordListBody,
  UpdateKeywordListForm,
} from '../../../schemas/moderation-rules.schema.js';
import type { KeywordListInput } from '../../../services/moderation/keyword-lists.service.js';
import { moderationPage } from './moderation-rules.routes.js';

const FORM_FIELDS = 8;

/** The uploads' bounds: one file of at most listBytes, a few fields, the whole form at most listBytes. */
const FORM_LIMITS = {
  fileSize: MODERATION_LIMITS.listBytes,
  files: 1,
  fields: FORM_FIELDS,
  fieldSize: MODERATION_LIMITS.listBytes,
  fieldNameSize: 100,
  parts: FORM_FIELDS + 1,
  headerPairs: 20,
};

/** The file of each form request, kept beside its fields (which the route's schema validates as its body). */
const files = new WeakMap<FastifyRequest, Uint8Array>();

/**
 * Keyword lists. Their create and update take JSON or multipart/form-data (the vendor's form:
 * fields and a CSV `file`): multipart is read in this plugin's scope only, so every other route
 * still answers a form with ERR_UNSUPPORTED_MEDIA_TYPE.
 */
export const moderationKeywordsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const lists = services.keywordLists;
  const tags = ['Moderation'];
  const config = { managementCredential: true };
  await app.register(multipart, { limits: FORM_LIMITS, throwFileSizeLimit: true });
  // Before validation: a form's fields become the body its schema checks; its file is put aside.
  app.addHook('preValidation', async (request) => {
    if (!request.isMultipart()) return;
    const form = await readForm(request);
    request.body = form.fields;
    if (form.file) files.set(request, form.file);
  });
  // The fields the service reads, by name (a JSON body's or a form's `file` text is not a file), and the form's file.
  const input = (request: FastifyRequest): KeywordListInput => {
    const body = request.body as Record<string, unknown>;
    const given: Record<string, unknown> = {};
    for (const key of ['id', 'name', 'description', 'category', 'searchTerms'] as const) if (body[key] !== undefined) given[key] = body[key];
    const file = files.get(request);
    if (file) given.file = file;
    return given as KeywordListInput;
  };
  const bodyLimit = MODERATION_LIMITS.listBytes;
  const formNote = `JSON, or multipart/form-data with the fields and a CSV \`file\` (RFC 4180; every non-empty cell a term). At most ${bodyLimit} bytes.`;

  app.post(
    '/moderation/keywords',
    {
      config,
      bodyLimit,
      schema: {
        operationId: 'create-rule-keyword',
        tags,
        summary: 'Create Keyword List',
        description: `Creates a keyword list that rules' conditions reference: words or patterns. ${formNote} At most 25 lists per app besides the built-in ones.`,
        body: { content: { 'application/json': { schema: CreateKeywordListBody }, 'multipart/form-data': { schema: CreateKeywordListForm } } },
        response: { 200: KeywordListResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await lists.create(request.ctx, input(request)) }),
  );

  app.get(
    '/moderation/keywords',
    {
      config,
      schema: {
        operationId: 'list-rule-keywords',
        tags,
        summary: 'List Keyword Lists',
        description: 'Lists the keyword lists of the app, the built-in ones included, newest first (then by id).',
        querystring: ModerationListQuery,
        response: { 200: KeywordListListResponse, ...errorResponses },
      },
    },
    async (request) => lists.list(request.ctx, moderationPage(request.query)),
  );

  app.get(
    '/moderation/keywords/:keywordId',
    {
      config,
      schema: {
        operationId: 'get-rule-keyword',
        tags,
        summary: 'Get Keyword List',
        description: 'Retrieves a keyword list.',
        params: KeywordParams,
        response: { 200: KeywordListResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await lists.get(request.ctx, request.params.keywordId) }),
  );

  app.put(
    '/moderation/keywords/:keywordId',
    {
      config,
      bodyLimit,
      schema: {
        operationId: 'update-rule-keyword',
        tags,
        summary: 'Update Keyword List',
        description: `Updates a keyword list: the fields given replace the list's; terms given (a file or searchTerms) replace its terms. ${formNote}`,
        params: KeywordParams,
        body: { content: { 'application/json': { schema: UpdateKeywordListBody }, 'multipart/form-data': { schema: UpdateKeywordListForm } } },
        response: { 200: KeywordListResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await lists.update(request.ctx, request.params.keywordId, input(request)) }),
  );

  app.delete(
    '/moderation/keywords/:keywordId',
    {
      config,
      schema: {
        operationId: 'delete-rule-keyword',
        tags,
        summary: 'Delete Keyword List',
        description: 'Deletes a keyword list that no rule references (ERR_KEYWORD_IN_USE names the rules that do). A deleted built-in list is no longer listed.',
        params: KeywordParams,
        response: { 200: DeleteResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await lists.delete(request.ctx, request.params.keywordId) }),
  );
};

/**
 * A form's text fields and its one file, read within
 * FORM_LIMITS: nothing beyond them is kept in memory. Problems answer ERR_BAD_REQUEST, and an
 * upload larger than listBytes ERR_PAYLOAD_TOO_LARGE.
 */
async function readForm(request: FastifyRequest): Promise<{ fields: Record<string, string>; file?: Uint8Array }> {
  const values = new Map<string, string[]>();
  let file: Uint8Array | undefined;
  let bytes = 0;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') {
          part.file.resume();
          throw badRequest({ [part.fieldname.slice(0, 100)]: 'is not a part of this operation: send the CSV file as the part "file"' });
        }
        file = await part.toBuffer();
        bytes += file.length;
      } else {
        if (part.fieldnameTruncated) throw badRequest({ body: 'holds a field name longer than 100 characters' });
        if (part.valueTruncated) throw tooLarge();
        if (typeof part.value !== 'string') throw badRequest({ [part.fieldname.slice(0, 100)]: 'must be text' });
        bytes += Buffer.byteLength(part.value);
        const name = part.fieldname === 'searchTerms[]' ? 'searchTerms' : part.fieldname;
        values.set(name, [...(values.get(name) ?? []), part.value]);
      }
      if (bytes > MODERATION_LIMITS.listBytes) throw tooLarge();
    }
  } catch (error) {
    throw formError(error);
  }
  // A repeated searchTerms field: its values are read as lines of one CSV text. Other fields come once.
  const fields: Record<string, string> = {};
  for (const [name, list] of values) {
    if (list.length > 1 && name !== 'searchTerms') throw badRequest({ [name.slice(0, 100)]: 'must be sent once' });
    fields[name] = list.join('\r\n');
  }
  const problem = findUnstorable(fields);
  if (problem) throw badRequest(problem);
  return file ? { fields, file } : { fields };
}

function tooLarge(): AppError {
  return new AppError('ERR_PAYLOAD_TOO_LARGE', { params: { limit: MODERATION_LIMITS.listBytes } });
}

/** @fastify/multipart's and busboy's errors, as catalogue errors; anything else unchanged. */
function formError(error: unknown): unknown {
  if (error instanceof AppError) return error;
  const code = (error as { code?: unknown }).code;
  const message = (error as { message?: unknown }).message;
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return tooLarge();
    case 'FST_FILES_LIMIT':
      return badRequest({ file: 'must be one file: a form carries one CSV file' });
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return badRequest({ body: `holds more than ${FORM_FIELDS} fields` });
    case 'FST_PROTO_VIOLATION':
      return badRequest({ body: 'holds a field named after a property of Object' });
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return badRequest({ body: 'holds a field sent as application/json that is not valid JSON' });
    case 'FST_MP_PREMATURE_CLOSE':
      return badRequest({ body: 'ended before the form did' });
  }
  if (typeof message === 'string' && /multipart|boundary|terminated early|unexpected end/i.test(message)) {
    return badRequest({ body: `is not valid multipart/form-data (${message})` });
  }
  return error;
}
