/**
 * Two nodes on one PostgreSQL database (docs/moderation.md, "Several nodes"): a rule changed on
 * one reaches the other's compiled set-up through NOTIFY, well within the 10 s a node trusts its
 * copy without one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createServices } from '../../src/container.js';
import { silentLogger } from '../../src/domain/context.js';
import { createTestApp, okData, TEST_REGION, type TestApp } from '../helpers/app.js';
import { TEST_ENGINE } from '../helpers/db.js';

describe('moderation on several nodes', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: PGlite is one process' }, () => {
  let t: TestApp;
  let other: ReturnType<typeof createServices>;
  before(async () => {
    t = await createTestApp();
    // A second node: its own services (and compiled set-ups) over the same database.
    other = createServices(t.database, { region: TEST_REGION });
    await other.moderationSetups.start(silentLogger);
  });
  after(async () => {
    await other?.moderationSetups.stop();
    await t?.close();
  });

  /** Waits until the other node's compiled set-up of the app evaluates (or not), within 3 s. */
  async function otherNodeEvaluates(expected: boolean): Promise<void> {
    const deadline = Date.now() + 3_000;
    for (;;) {
      if ((await other.moderationSetups.get(t.appA.appId)).matcher.evaluates === expected) return;
      if (Date.now() > deadline) assert.fail(`the other node's set-up still evaluates ${!expected} after 3 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('hears a rule created, disabled and deleted on another node', async () => {
    await otherNodeEvaluates(false);
    const rule = { id: 'nodes-rule', name: 'Nodes', enabled: true, conditions: [{ operand: 'text', category: 'word', operator: 'contains', value: ['x'] }], action: ['blockMessage'] };
    await okData(t, t.appA, 'POST', '/v3/moderation/rules', undefined, rule);
    await otherNodeEvaluates(true);
    await okData(t, t.appA, 'PUT', `/v3/moderation/rules/${rule.id}`, undefined, { enabled: false });
    await otherNodeEvaluates(false);
    await okData(t, t.appA, 'PUT', `/v3/moderation/rules/${rule.id}`, undefined, { enabled: true });
    await otherNodeEvaluates(true);
    await okData(t, t.appA, 'DELETE', `/v3/moderation/rules/${rule.id}`, undefined);
    await otherNodeEvaluates(false);
  });
});
