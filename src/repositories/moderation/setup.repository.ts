import { sql } from 'kysely';
import type { Executor } from '../../db/transaction.js';
import { KEYWORD_LIST_ROW, type KeywordListRow } from './keyword-lists.repository.js';
import { RULE_ROW, type RuleRow } from './rules.repository.js';

/** Everything of an app's moderation set-up that is stored, read at one instant. */
export interface StoredSetup {
  /** The app's moderation version ('0' before its first change). */
  version: string;
  rules: RuleRow[];
  lists: KeywordListRow[];
  /** Ids of the built-in rules and lists the app deleted. */
  deletedRules: Set<string>;
  deletedLists: Set<string>;
}

/**
 * The version of an app's moderation set-up (moderation_versions): moved in the transaction of
 * every change to its rules, lists or hook, so a node's compiled matcher knows when it is stale;
 * and the whole set-up read by one statement.
 */
/** The channel on which a node that changed an app's moderation set-up tells the others (ModerationSetups.suspectAll). */
export const MODERATION_CHANNEL = 'parley_moderation';

export class ModerationSetupRepository {
  constructor(private readonly db: Executor) {}

  /**
   * Tells other processes (LISTENing on MODERATION_CHANNEL) that a set-up changed, after its
   * commit, in a statement of its own (as EventsRepository.signal does).
   */
  async signal(): Promise<void> {
    await sql`select pg_notify(${MODERATION_CHANNEL}, '')`.execute(this.db);
  }

  /** The app's version, '0' when it never changed anything. */
  async version(appId: string, tx: Executor = this.db): Promise<string> {
    const row = await tx.selectFrom('moderation_versions').select('version').where('app_id', '=', appId).executeTakeFirst();
    return row ? String(row.version) : '0';
  }

  /**
   * Moves the app's version on by one; the new version. Its row stays locked until the
   * transaction ends, so it also serialises the app's moderation writes (limits, ids, references).
   */
  async bump(appId: string, tx: Executor): Promise<string> {
    const row = await tx
      .insertInto('moderation_versions')
      .values({ app_id: appId, version: 1 })
      .onConflict((oc) => oc.column('app_id').doUpdateSet({ version: sql`moderation_versions.version + 1` }))
      .returning('version')
      .executeTakeFirstOrThrow();
    return String(row.version);
  }

  /** The version, rows and tombstones of the app, by one statement (one snapshot, one round trip). */
  async read(appId: string, tx: Executor = this.db): Promise<StoredSetup> {
    const result = await sql<{ version: string | null; rules: unknown[][] | null; lists: unknown[][] | null; deleted: Array<[string, string]> | null }>`
      select
        (select v.version::text from moderation_versions v where v.app_id = ${appId}) as version,
        (select json_agg(${RULE_ROW.select('r')} order by r.id) from moderation_rules r where r.app_id = ${appId}) as rules,
        (select json_agg(${KEYWORD_LIST_ROW.select('l')} order by l.id) from moderation_keyword_lists l where l.app_id = ${appId}) as lists,
        (select json_agg(json_build_array(d.kind, d.id)) from moderation_deleted_defaults d
          where d.app_id = ${appId} and d.kind in ('rule', 'list')) as deleted`.execute(tx);
    const row = result.rows[0]!;
    const deleted = row.deleted ?? [];
    return {
      version: row.version ?? '0',
      rules: (row.rules ?? []).map(RULE_ROW.read),
      lists: (row.lists ?? []).map(KEYWORD_LIST_ROW.read),
      deletedRules: new Set(deleted.filter(([kind]) => kind === 'rule').map(([, id]) => id)),
      deletedLists: new Set(deleted.filter(([kind]) => kind === 'list').map(([, id]) => id)),
    };
  }
}
