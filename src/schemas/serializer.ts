import fastJsonStringify from 'fast-json-stringify';

/**
 * Fastify's serializer compiler, compiling a route's response schema when it first writes an
 * answer with it (as the validators are compiled on first use: see validator.ts). Fastify
 * compiles every route's response schemas (~150 routes, each with its error answers) when the
 * app starts, ~0.9 s of CPU on a slow machine, paid by a server at its start, each CLI command
 * and each test file; compiled on first use, a route never answered costs nothing. The same
 * serializer as Fastify's default (fast-json-stringify, no shared schemas: Parley adds none).
 */
export function serializerCompiler({ schema }: { schema: unknown }): (data: unknown) => string {
  let serialize: ((data: unknown) => string) | undefined;
  return (data) => (serialize ??= fastJsonStringify(schema as never))(data);
}
