import type { FastifyRequest } from 'fastify';
import { badRequest } from '../../domain/errors.js';

/**
 * PostgreSQL text cannot hold the NUL character, so a string carrying one would fail deep in a
 * query. These checks refuse such input up front with ERR_BAD_REQUEST.
 */

/** The first path (`a.b.0`) at which a string or key holds NUL, if any. */
export function findNul(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path || 'value' : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const childPath = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return childPath;
    const found = findNul(child, childPath);
    if (found) return found;
  }
  return undefined;
}

/** For a JSON body's raw text: only text with a \u0000 escape can decode to NUL. */
export function assertNoNulInJson(text: string, parsed: unknown): void {
  if (!text.includes('\\u0000')) return;
  const field = findNul(parsed);
  if (field) throw badRequest({ [field]: 'must not contain the NUL character' });
}

/** For decoded path parameters and query values (`%00`). */
export function assertNoNulInRequest(request: FastifyRequest): void {
  const field = findNul(request.params) ?? findNul(request.query);
  if (field) throw badRequest({ [field]: 'must not contain the NUL character' });
}
