/**
 * A fake SendGrid v3 Mail Send API on loopback, checking the protocol: the bearer API key, a
 * JSON body of personalizations (each with `to` addresses), `from`, `subject` and `content`
 * (text/plain before text/html). Accepted mail is answered 202 with an X-Message-Id.
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import { answer, isObject, json, listen, readBody, Script, type FakeBase } from './common.js';

export interface SentMail {
  headers: http.IncomingHttpHeaders;
  body: any;
  messageId: string;
}

export interface FakeSendGrid extends FakeBase {
  baseUrl: string;
  apiKey: string;
  mails: SentMail[];
  /** Addresses SendGrid refuses as addresses (400 on personalizations.0.to.0.email). */
  refusedAddresses: Set<string>;
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

export async function startFakeSendGrid(options: { apiKey?: string } = {}): Promise<FakeSendGrid> {
  const apiKey = options.apiKey ?? `SG.${crypto.randomBytes(11).toString('base64url')}.${crypto.randomBytes(32).toString('base64url')}`;
  const problems: string[] = [];
  const script = new Script();
  const bad = (res: http.ServerResponse, field: string | null, message: string, noted = true) => {
    if (noted) problems.push(`${field ?? 'body'}: ${message}`);
    answer(res, 400, { errors: [{ message, field, help: null }] });
  };
  const server = await listen(async (req, res) => {
    const raw = await readBody(req);
    if (fake.hangAll) return;
    if (req.method !== 'POST' || req.url !== '/v3/mail/send') {
      problems.push(`${req.method} ${req.url}`);
      return answer(res, 404, { errors: [{ message: 'not found', field: null, help: null }] });
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return answer(res, 401, { errors: [{ message: 'The provided authorization grant is invalid, expired, or revoked', field: null, help: null }] });
    }
    if (!String(req.headers['content-type']).startsWith('application/json')) return bad(res, null, `content-type ${req.headers['content-type']}`);
    const body = json(raw);
    if (!isObject(body)) return bad(res, null, 'Bad Request');
    const personalizations = body.personalizations;
    if (!Array.isArray(personalizations) || personalizations.length === 0) return bad(res, 'personalizations', 'The personalizations field is required and must have at least one personalization.');
    for (const [i, p] of personalizations.entries()) {
      if (!isObject(p) || !Array.isArray(p.to) || p.to.length === 0)
        return bad(res, `personalizations.${i}.to`, 'The to array is required for all personalization objects, and must have at least one email object with a valid email address.');
      for (const [j, to] of (p.to as unknown[]).entries()) {
        const email = isObject(to) ? to.email : undefined;
        if (typeof email !== 'string' || !EMAIL.test(email)) return bad(res, `personalizations.${i}.to.${j}.email`, 'Does not contain a valid address.');
        if (fake.refusedAddresses.has(email)) return bad(res, `personalizations.${i}.to.${j}.email`, 'Does not contain a valid address.', false);
        if (isObject(to) && to.name !== undefined && typeof to.name !== 'string') return bad(res, `personalizations.${i}.to.${j}.name`, 'Invalid type. Expected: string');
      }
    }
    const template = body.template_id;
    if (template !== undefined && (typeof template !== 'string' || !/^d-[0-9a-f]{32}$/.test(template))) return bad(res, 'template_id', 'The template_id must be a valid dynamic template id.');
    for (const [i, p] of personalizations.entries()) {
      const data = (p as Record<string, unknown>).dynamic_template_data;
      if (data !== undefined && (!isObject(data) || template === undefined))
        return bad(res, `personalizations.${i}.dynamic_template_data`, 'dynamic_template_data is an object, with a dynamic template_id.');
    }
    if (body.reply_to !== undefined && (!isObject(body.reply_to) || typeof body.reply_to.email !== 'string' || !EMAIL.test(body.reply_to.email)))
      return bad(res, 'reply_to.email', 'Does not contain a valid address.');
    if (body.asm !== undefined && (!isObject(body.asm) || !Number.isInteger(body.asm.group_id) || (body.asm.group_id as number) <= 0))
      return bad(res, 'asm.group_id', 'The asm.group_id must be a positive integer.');
    const known = new Set(['personalizations', 'from', 'subject', 'content', 'template_id', 'reply_to', 'asm']);
    const unknown = Object.keys(body).find((key) => !known.has(key));
    if (unknown) return bad(res, unknown, 'not a field this fake knows');
    const from = body.from;
    if (!isObject(from) || typeof from.email !== 'string' || !EMAIL.test(from.email)) return bad(res, 'from.email', 'The from email does not contain a valid address.');
    if (template === undefined && (typeof body.subject !== 'string' || body.subject === '')) return bad(res, 'subject', 'The subject is required.');
    const content = template !== undefined && body.content === undefined ? [] : body.content;
    if (!Array.isArray(content) || (content.length === 0 && template === undefined)) return bad(res, 'content', 'Unless a valid template_id is provided, the content parameter is required.');
    for (const [i, part] of content.entries()) {
      if (!isObject(part) || typeof part.type !== 'string' || typeof part.value !== 'string' || part.value === '')
        return bad(res, `content.${i}`, 'The content value must be a string at least one character in length.');
    }
    const types = content.map((part) => (part as { type: string }).type);
    if (types.includes('text/plain') && types.indexOf('text/plain') !== 0) return bad(res, 'content.0.type', 'If present, text/plain must be first, followed by text/html.');
    const scripted = script.next();
    if (scripted) return scripted.hang ? undefined : answer(res, scripted.status, scripted.body, scripted.headers);
    const messageId = crypto.randomBytes(16).toString('base64url');
    fake.mails.push({ headers: req.headers, body, messageId });
    answer(res, 202, undefined, { 'x-message-id': messageId });
  }, problems);
  const fake: FakeSendGrid = {
    baseUrl: server.origin,
    apiKey,
    problems,
    mails: [],
    refusedAddresses: new Set(),
    hangAll: false,
    script: (...answers) => script.push(answers),
    close: () => server.close(),
  };
  return fake;
}
