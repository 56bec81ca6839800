import fs from 'node:fs';
import readline from 'node:readline';

/** The kinds of record a file holds, in the order they are imported. */
export const KINDS = ['user', 'group', 'member', 'message'] as const;
export type RecordKind = (typeof KINDS)[number];

/** Per kind: the API path, its body's wrapper, and the field that keys a record. */
export const KIND_INFO: Record<RecordKind, { path: string; wrapper: string; key: string }> = {
  user: { path: 'users', wrapper: 'users', key: 'uid' },
  group: { path: 'groups', wrapper: 'groups', key: 'guid' },
  member: { path: 'members', wrapper: 'members', key: 'memberId' },
  message: { path: 'messages', wrapper: 'messages', key: 'muid' },
};

/** One line of the file: its record (without `kind`) and key, or why it cannot be sent. */
export type ParsedLine = { line: number; kind: RecordKind; key: string; record: Record<string, unknown> } | { line: number; kind: string | undefined; key: string | undefined; invalid: string };

/**
 * Parses a line `{"kind": ..., ...record}`. A member without memberId gets
 * `<guid>_member_<uid>`, the key the API expects.
 */
export function parseLine(text: string, line: number): ParsedLine | undefined {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { line, kind: undefined, key: undefined, invalid: 'the line is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { line, kind: undefined, key: undefined, invalid: 'the line is not a JSON object' };
  const { kind, ...record } = value as Record<string, unknown>;
  if (typeof kind !== 'string' || !(KINDS as readonly string[]).includes(kind)) {
    return { line, kind: typeof kind === 'string' ? kind : undefined, key: undefined, invalid: `kind must be one of ${KINDS.join(', ')}` };
  }
  const info = KIND_INFO[kind as RecordKind];
  if (kind === 'member' && record.memberId === undefined && typeof record.guid === 'string' && typeof record.uid === 'string') {
    record.memberId = `${record.guid}_member_${record.uid}`;
  }
  const key = record[info.key];
  if (typeof key !== 'string' || key === '') return { line, kind, key: undefined, invalid: `a ${kind} needs ${info.key}, a non-empty string` };
  return { line, kind: kind as RecordKind, key, record };
}

/** The parsed lines of a file, streamed (the file is never held in memory). */
export async function* readLines(file: string): AsyncGenerator<ParsedLine> {
  const stream = fs.createReadStream(file, 'utf8');
  const input = readline.createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of input) {
      line++;
      const parsed = parseLine(text, line);
      if (parsed) yield parsed;
    }
  } finally {
    // A reader that stops early (Ctrl-C) leaves the file open otherwise.
    input.close();
    stream.destroy();
  }
}

/**
 * Which import worker a message goes to: all messages of one conversation go to the same one,
 * so they are sent in file order, one call at a time (their ids follow that order).
 */
export function conversationWorker(record: Record<string, unknown>, workers: number): number {
  const conversation = conversationKey(record);
  let hash = 2166136261;
  for (let i = 0; i < conversation.length; i++) hash = Math.imul(hash ^ conversation.charCodeAt(i), 16777619);
  // FNV's low bits are weak (the lowest is the parity of the input): mix before taking them.
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  hash ^= hash >>> 16;
  return (hash >>> 0) % workers;
}

/**
 * A message's conversation as the vendor names it: `group_<guid>`, or the two uids sorted (ids
 * compare lower-cased). It only spreads conversations over workers: when two conversations
 * share one such id (domain/conversation-id.ts), they share a worker, and each keeps its order.
 */
export function conversationKey(record: Record<string, unknown>): string {
  const sender = String(record.sender ?? '').toLowerCase();
  const receiver = String(record.receiver ?? '').toLowerCase();
  return record.receiverType === 'group' ? `group_${receiver}` : [sender, receiver].sort().join('_user_');
}
