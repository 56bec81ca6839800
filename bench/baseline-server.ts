// The no-database baselines: bare Fastify answering, from memory, a user-shaped JSON body and a
// page of 50 messages shaped as Parley's history pages, each serialised through a response
// schema as Parley's routes are. Ratios against them show what Parley's own work costs.
import Fastify from 'fastify';
import { MessageListResponse } from '../src/schemas/messages.schema.js';
import { announceReady } from './lib/processes.js';

const app = Fastify({ logger: false });
const user = { uid: 'bench-user', name: 'Bench User', role: 'default', status: 'offline', createdAt: 1700000000 };
app.get(
  '/v3/users/:uid',
  {
    schema: {
      response: {
        200: {
          type: 'object',
          properties: {
            data: {
              type: 'object',
              properties: { uid: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, status: { type: 'string' }, createdAt: { type: 'integer' } },
            },
          },
        },
      },
    },
  },
  async () => ({ data: user }),
);
// A history page as GET /v3/users/{uid}/messages?limit=50 answers it, built once.
const entity = (uid: string, extra: Record<string, unknown> = {}) => ({
  entity: { uid, name: `Seed user ${uid}`, role: 'default', status: 'offline', createdAt: 1700000000, metadata: { seeded: true }, ...extra },
  entityType: 'user',
});
const page = {
  data: Array.from({ length: 50 }, (_, i) => {
    const [sender, receiver] = i % 2 ? ['seed-1', 'seed-0'] : ['seed-0', 'seed-1'];
    return {
      id: String(1_000_000 + i),
      conversationId: 'seed-0_user_seed-1',
      sender,
      receiverType: 'user',
      receiver,
      category: 'message',
      type: 'text',
      data: { text: `Message ${i} of a long conversation`, entities: { sender: entity(sender), receiver: entity(receiver, { conversationId: 'seed-0_user_seed-1' }) } },
      sentAt: 1700000000 + i,
      updatedAt: 1700000000 + i,
    };
  }),
  meta: {
    current: { limit: 50, count: 50 },
    previous: { affix: 'prepend', id: '1000000', sentAt: 1700000000 },
    next: { affix: 'append', id: '1000049', sentAt: 1700000049 },
  },
};
app.get('/v3/users/:uid/messages', { schema: { response: { 200: MessageListResponse } } }, async () => page);

await app.listen({ port: 0, host: '127.0.0.1' });
announceReady({ port: (app.server.address() as { port: number }).port });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
