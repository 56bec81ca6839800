import { EVENT_ID_PATTERN } from '../../domain/events.js';

/** A client's frame, read (docs/realtime.md, "Protocol"), or the reason it is refused (an error frame). */
export type ClientFrame =
  | { type: 'auth'; authToken: string | undefined; lastEventId: string | undefined }
  | { type: 'typing_started' | 'typing_ended'; receiver: string; receiverType: 'user' | 'group' }
  | { type: 'ping' }
  | { type: 'invalid'; code: 'ERR_BAD_REQUEST' | 'ERR_PAYLOAD_TOO_LARGE'; message: string };

const EVENT_ID = new RegExp(EVENT_ID_PATTERN);
const ID = /^[a-zA-Z0-9_-]{1,100}$/;

/** Reads a text frame of at most `maxBytes` (its JSON nesting is never walked beyond the fields named here). */
export function readClientFrame(text: string, byteLength: number, maxBytes: number): ClientFrame {
  if (byteLength > maxBytes) return invalid('ERR_PAYLOAD_TOO_LARGE', `A frame may hold at most ${maxBytes} bytes.`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return invalid('ERR_BAD_REQUEST', 'A frame must be a JSON object with a type.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return invalid('ERR_BAD_REQUEST', 'A frame must be a JSON object with a type.');
  const frame = value as Record<string, unknown>;
  switch (frame.type) {
    case 'ping':
      return { type: 'ping' };
    case 'auth': {
      const resume = frame.resume;
      let lastEventId: string | undefined;
      if (resume !== undefined && resume !== null) {
        const id = typeof resume === 'object' ? (resume as Record<string, unknown>).lastEventId : undefined;
        if (typeof id !== 'string' || !EVENT_ID.test(id)) return invalid('ERR_BAD_REQUEST', 'resume.lastEventId must be an event id (digits) as an event frame carried it.');
        lastEventId = id;
      }
      return { type: 'auth', authToken: typeof frame.authToken === 'string' ? frame.authToken : undefined, lastEventId };
    }
    case 'typing_started':
    case 'typing_ended': {
      const { receiver, receiverType } = frame;
      if (receiverType !== 'user' && receiverType !== 'group') return invalid('ERR_BAD_REQUEST', 'receiverType must be user or group.');
      if (typeof receiver !== 'string' || !ID.test(receiver)) return invalid('ERR_BAD_REQUEST', 'receiver must be a uid or a guid.');
      return { type: frame.type, receiver: receiver.toLowerCase(), receiverType };
    }
    default:
      return invalid('ERR_BAD_REQUEST', typeof frame.type === 'string' ? `Unknown frame type: ${frame.type.slice(0, 40)}.` : 'A frame must be a JSON object with a type.');
  }
}

function invalid(code: 'ERR_BAD_REQUEST' | 'ERR_PAYLOAD_TOO_LARGE', message: string): ClientFrame {
  return { type: 'invalid', code, message };
}
