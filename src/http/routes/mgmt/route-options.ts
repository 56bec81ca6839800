import type { Services } from '../../../container.js';

export interface ManagementRouteOptions {
  services: Services;
  /** Left out of the OpenAPI document (the `/mgmt` copy of the same operations). */
  hidden: boolean;
  /** The bases the operations are served at, for the OpenAPI document. */
  servers: Array<{ url: string }>;
}

/** The schema parts every management route shares: its tag, servers and visibility. */
export function documented(options: ManagementRouteOptions, tag: string) {
  return { tags: [tag], servers: options.servers, hide: options.hidden, security: [] as Array<Record<string, string[]>> };
}
