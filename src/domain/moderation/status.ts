import { AppError } from '../errors.js';

/**
 * A message's moderation status (docs/moderation.md), as the vendor's messages carry it in
 * `data.moderation.status`: `approved` (the engine let it through, or a moderator did),
 * `pending` (held for review), `disapproved` (a moderator rejected or disapproved it). Only
 * messages of apps that moderate carry it; the server writes it, never the client (prepare drops
 * a `moderation` key a client sends).
 */
export type ModerationStatus = 'approved' | 'pending' | 'disapproved';

/** A message's data with `moderation.status` set: the other keys keep their order, `moderation` goes last. */
export function dataWithStatus(data: unknown, status: ModerationStatus): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    for (const [key, value] of Object.entries(data)) if (key !== 'moderation') out[key] = value;
  }
  out.moderation = { status };
  return out;
}

/**
 * dataWithStatus for data as JSON text written by JSON.stringify of an object with no
 * `moderation` key (prepare's dataJson): the key appended to the text, not parsed and written again.
 */
export function dataJsonWithStatus(dataJson: string, status: ModerationStatus): string {
  const moderation = `"moderation":{"status":"${status}"}`;
  return dataJson === '{}' ? `{${moderation}}` : `${dataJson.slice(0, -1)},${moderation}}`;
}

/**
 * What only a shown message allows: a thread reply to it, a reaction to it. Only its sender sees
 * a held message (repositories/message-visibility.ts); even they wait for its approval, so nothing
 * about it reaches the others (a reply, a reaction event) before it does.
 */
export function requireShown(message: { id: string | number; held: boolean }, action: 'replied to' | 'reacted to'): void {
  if (message.held) throw new AppError('ERR_MESSAGE_HELD', { params: { id: String(message.id), action } });
}
