import { sql, type RawBuilder } from 'kysely';

/**
 * The first CTEs of one step of a reader of the event log that keeps a cursor per app (a
 * consumer's fan-out, the statistics' aggregation), written once: `claimed`, the cursors of the
 * apps no other process is moving (their rows locked, the others skipped); `batch`, each app's
 * next events up to `safeId`, at most `perApp` (app_id, id, trigger, conversation_id,
 * message_id, created_at, and `data` when asked); `counted`, per app how many and the last; and
 * `moved`, the cursors moved past what was read (to `safeId` when an app had no more). What the
 * step makes of `batch` follows them in the same statement, so it commits with the cursors.
 * `cursors` is the table, `scope` the predicate of the reader's rows in it.
 */
export function logStep(options: { cursors: 'event_cursors' | 'stats_cursors'; scope: RawBuilder<unknown>; safeId: string; perApp: number; data?: boolean }): RawBuilder<never> {
  const { scope, safeId, perApp } = options;
  const table = sql.table(options.cursors);
  const data = options.data ? sql`, e.data` : sql``;
  return sql`
      claimed as (
        select app_id, event_id from ${table} where ${scope} and event_id < ${safeId}::bigint
        order by app_id for update skip locked
      ),
      batch as (
        select c.app_id, e.id, e.trigger, e.conversation_id, e.message_id, e.created_at${data}
        from claimed c cross join lateral (
          select e.id, e.trigger, e.conversation_id, e.message_id, e.created_at${data} from events e
          where e.app_id = c.app_id and e.id > c.event_id and e.id <= ${safeId}::bigint
          order by e.id limit ${perApp}) e
      ),
      counted as (
        select c.app_id, count(b.id) as n, max(b.id) as last
        from claimed c left join batch b on b.app_id = c.app_id group by c.app_id
      ),
      moved as (
        update ${table} w set event_id = case when n.n >= ${perApp} then n.last else ${safeId}::bigint end
        from counted n where w.app_id = n.app_id and ${scope}
        returning w.app_id
      )`;
}
