/**
 * A resume reads the resuming user's rows, not the app's log (docs/realtime.md, "Resume"): in an
 * app whose log holds 20,000 events, 50 of them the user's, the resume's statement
 * (GatewayRepository.userEventsAfter) reads the events by the indexes of migration 0028 alone,
 * and the rows its scans of `events` touch are those 50 and the app's few events about users
 * (blocks, removals: candidates the audience rule decides), never the log. Read through
 * EXPLAIN ANALYZE on both engines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { GatewayRepository, userEventsAfterQuery } from '../../src/repositories/gateway/gateway.repository.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const APP = 'resume-plan-app';
const LOG = 20_000;
/** One event in this many is the user's: 50 of the 20,000. */
const EVERY = 400;
/** One event in this many (not the user's) is another user's block: about users, but not theirs. */
const OTHERS_ABOUT_EVERY = 200;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

describe('a resume’s plan', () => {
  let t: TestDatabase;
  let mine: string[];
  let othersAbout: string[];
  before(async () => {
    t = await createTestDatabase();
    const db = t.database.db;
    await sql`insert into users (app_id, uid, name) values (${APP}, 'me', 'Me'), (${APP}, 'pal', 'Pal'), (${APP}, 'boss', 'Boss')`.execute(db);
    await sql`insert into groups (app_id, guid, name, type, owner) values (${APP}, 'mine', 'Mine', 'public', 'boss'), (${APP}, 'gone', 'Gone', 'public', 'boss')`.execute(db);
    // The user is a member of `mine`; they were kicked from `gone` (its removals of them: about them).
    await sql`insert into group_members (app_id, guid, uid, scope) values (${APP}, 'mine', 'me', 'participant'), (${APP}, 'mine', 'boss', 'admin'), (${APP}, 'gone', 'boss', 'admin')`.execute(db);
    await sql`insert into conversations (app_id, conversation_id, conversation_type) values (${APP}, 'me:pal', 'user')`.execute(db);
    await sql`insert into user_conversations (app_id, uid, conversation_id, conversation_with) values (${APP}, 'me', 'me:pal', 'pal'), (${APP}, 'pal', 'me:pal', 'me')`.execute(db);
    // The log: other users' 1:1s and groups, and every EVERY-th event the user's, in turn a
    // message of their 1:1, of their group, their own block, their removal from `gone`.
    await sql`
      insert into events (app_id, trigger, conversation_id, data)
      select ${APP},
             case when i % ${EVERY} = 0 then (array['message_sent', 'message_sent', 'user_blocked', 'group_member_kicked'])[(i / ${EVERY}) % 4 + 1]
                  when i % ${OTHERS_ABOUT_EVERY} = 0 then 'user_blocked'
                  else 'message_sent' end,
             case when i % ${EVERY} = 0 then (array['me:pal', 'group_mine', null, 'group_gone'])[(i / ${EVERY}) % 4 + 1]
                  when i % ${OTHERS_ABOUT_EVERY} = 0 then null
                  when i % 3 = 0 then 'group_g' || (i % 40)
                  else 'o' || (i % 500) || ':p' || (i % 500) end,
             case when i % ${EVERY} = 0 and (i / ${EVERY}) % 4 = 2 then json_build_object('by', json_build_object('uid', 'me'), 'users', json_build_object())
                  when i % ${EVERY} = 0 and (i / ${EVERY}) % 4 = 3 then json_build_object('members', json_build_object('me', json_build_object('uid', 'me')))
                  when i % ${OTHERS_ABOUT_EVERY} = 0 then json_build_object('by', json_build_object('uid', 'o' || i), 'users', json_build_object())
                  else json_build_object('text', 'm' || i) end
      from generate_series(1, ${LOG}) as i order by i`.execute(db);
    const rows = await sql<{ id: string; theirs: boolean }>`
      select id::text as id, (conversation_id in ('me:pal', 'group_mine', 'group_gone') or data->'by'->>'uid' = 'me') as theirs
      from events where app_id = ${APP} and (conversation_id in ('me:pal', 'group_mine', 'group_gone') or trigger = 'user_blocked') order by id`.execute(db);
    mine = rows.rows.filter((row) => row.theirs).map((row) => row.id);
    othersAbout = rows.rows.filter((row) => !row.theirs).map((row) => row.id);
    await sql`analyze`.execute(db);
  });
  after(async () => {
    await t?.drop();
  });

  it('holds the user’s 50 events among 20,000', async () => {
    assert.equal(mine.length, LOG / EVERY);
    const rows = await new GatewayRepository(t.database.db).userEventsAfter(APP, 'me', '0', String(Number.MAX_SAFE_INTEGER), 1_000);
    // Candidates: the user's events and the app's other events about users (the audience rule drops those).
    assert.deepEqual(
      rows.map((row) => row.id),
      [...mine, ...othersAbout].sort((a, b) => Number(a) - Number(b)),
    );
  });

  it('knows the oldest event the log holds by its id, not its text', async () => {
    const gateway = new GatewayRepository(t.database.db);
    const first = await gateway.firstEvent(APP);
    // The oldest id of a log beginning at 9 (as text, '10' would come first).
    const oldest = BigInt(first!.id);
    await sql`delete from events where app_id = ${APP} and id < ${String(oldest + 8n)}`.execute(t.database.db);
    assert.equal((await gateway.firstEvent(APP))?.id, String(oldest + 8n));
  });

  it('reads them by the 0028 indexes, touching rows in proportion to the user’s events, not the log', async () => {
    const query = userEventsAfterQuery(APP, 'me', '0', String(Number.MAX_SAFE_INTEGER), 1_000);
    const result = await sql<{ 'QUERY PLAN': unknown }>`explain (analyze, format json) ${query}`.execute(t.database.db);
    const cell = result.rows[0]!['QUERY PLAN'];
    const plan = (typeof cell === 'string' ? JSON.parse(cell) : cell) as Array<{ Plan: PlanNode }>;
    const nodes = nodesOf(plan[0]!.Plan);
    const text = nodes
      .filter((node) => node['Relation Name'] !== undefined || node['Index Name'] !== undefined)
      .map(
        (node) =>
          `${node['Node Type']} ${node['Index Name'] ?? ''} on ${node['Relation Name'] ?? '-'}: rows ${node['Actual Rows']} × ${node['Actual Loops']}, filtered ${node['Rows Removed by Filter'] ?? 0}`,
      )
      .join('; ');
    const onEvents = nodes.filter((node) => node['Relation Name'] === 'events');
    assert.ok(onEvents.length > 0, text);
    assert.ok(!onEvents.some((node) => node['Node Type'] === 'Seq Scan'), `a sequential scan of the log: ${text}`);
    // Every index of events read is one of migration 0028's (a bitmap index scan names no relation: by its name).
    const indexes = new Set(nodes.map((node) => node['Index Name']).filter((name) => name?.startsWith('events')));
    assert.deepEqual([...indexes].sort(), ['events_app_about_users', 'events_app_conversation'], text);
    // The rows the scans of events touched: produced and filtered away, over all their loops.
    const touched = onEvents.reduce((sum, node) => {
      const loops = node['Actual Loops'] ?? 1;
      return sum + loops * ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0));
    }, 0);
    const wanted = mine.length + othersAbout.length;
    // The user's removals from `gone` are read twice: by the scan of the events about users (which
    // names `gone` as a group of theirs during the range) and with the rest of `gone`'s events.
    const removals = LOG / EVERY / 4;
    assert.ok(touched >= mine.length && touched <= wanted + removals + 10, `${touched} rows of events touched for ${mine.length} of the user’s (${wanted} candidates) in a log of ${LOG}: ${text}`);
  });
});
