import type { Selectable } from 'kysely';
import type { ApiKeysTable, AppsTable } from '../db/schema.js';
import type { RateLimitOverrides } from '../domain/rate-limits.js';

/** An app as stored. */
export type AppRow = Selectable<AppsTable>;

/** An app with one of its keys, as every request's credential lookup reads them (see CredentialCache). */
export interface AppWithKey {
  app: AppRow;
  /** The key's scope, when the key hash belongs to the app. */
  key: Pick<Selectable<ApiKeysTable>, 'key_hash' | 'scope'> | undefined;
  /** The app's own rate limits, read in the same lookup; undefined when it has none. */
  limits?: RateLimitOverrides;
}
