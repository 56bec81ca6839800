import type { Services } from '../../../container.js';
import { validatorCompiler } from '../../../schemas/validator.js';

export interface DataImportRouteOptions {
  services: Services;
  /** Largest accepted body, in bytes: a batch of many records is larger than the general API's limit. */
  bodyLimit: number;
  /** Left out of the OpenAPI document (the second prefix of the same operations). */
  hidden: boolean;
}

/**
 * The body is checked record by record by the service, so that one bad record fails only
 * itself: the route schema documents the body but does not validate it. The other parts (the
 * query) are validated as on every route.
 */
// biome-ignore lint/suspicious/noExplicitAny: a JSON schema, as Fastify passes it
const bodyAsSent = (route: { schema: Record<string, any>; httpPart?: string }) => (route.httpPart === 'body' ? () => true : validatorCompiler(route));

/** What every import route sets besides its schema: its body limit, the import rate-limit class, and records the service checks. */
export function routeOptions(options: DataImportRouteOptions) {
  return { bodyLimit: options.bodyLimit, validatorCompiler: bodyAsSent, config: { rateLimit: 'import' as const, bodyCheck: 'records' as const } };
}
