import type { LoadOptions, LoadResult } from './load.js';

/** Where a bench server is, and how to call it. */
export interface SendTarget {
  base: string;
  headers: Record<string, string>;
  /** Users seeded (seed-0 ...), and groups chat-0 ... of 10 members each. */
  users: number;
  chatGroups: number;
}

/**
 * The send scenarios: 1:1 (request i goes from seed-(2p) to seed-(2p+1), p = i mod 2,000 pairs,
 * so concurrent sends rarely share a conversation) and group (request i goes to chat-(i mod G)
 * from one of its 10 members). Request i names its sender and receiver; the body is otherwise
 * the same.
 */
export function sendScenarios(target: SendTarget, load: (options: LoadOptions) => Promise<LoadResult>, connections: number, durationSeconds: number) {
  const send = (receiverType: 'user' | 'group', route: (i: number) => { sender: string; receiver: string }) => {
    let i = 0;
    const rest = JSON.stringify({ receiverType, category: 'message', type: 'text', data: { text: 'Hello there 👋' } }).slice(1);
    return load({
      url: `${target.base}/v3/messages`,
      method: 'POST',
      connections,
      durationSeconds,
      headers: target.headers,
      request: () => {
        const { sender, receiver } = route(i++);
        return { headers: { onbehalfof: sender }, body: `{"receiver":"${receiver}",${rest}` };
      },
    });
  };
  const pairs = Math.min(2000, Math.floor(target.users / 2));
  const groups = target.chatGroups;
  return {
    oneToOne: () => send('user', (i) => ({ sender: `seed-${(i % pairs) * 2}`, receiver: `seed-${(i % pairs) * 2 + 1}` })),
    group: () => send('group', (i) => ({ sender: `seed-${(i % groups) * 10 + (Math.floor(i / groups) % 10)}`, receiver: `chat-${i % groups}` })),
  };
}
