// Crash under load (issue 20), small: 8 concurrent senders (1:1 and group sends), `kill -9` of
// the server once 300 sends are acknowledged, a restart on the same database, and the re-send of
// every unanswered message with its muid (bench/lib/crash.ts). `npm run bench -- --only crash`
// runs the same with many more senders and several kills.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { describeCrash, runCrashScenario, type CrashReport } from '../../bench/lib/crash.js';
import { newDeployment, type Deployment } from '../helpers/cli.js';
import { TEST_ENGINE } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

describe(`crash under load (${TEST_ENGINE})`, () => {
  let deployment: Deployment;
  let report: CrashReport;
  let receiver: Receiver;

  before(async () => {
    // A migrated data dir: the first start skips the migrations (the bulk of its time), and still creates the default app.
    deployment = await newDeployment({}, { migrated: true });
    // A webhook on message_sent (issue 22): every acknowledged message must reach it.
    receiver = await startReceiver();
    report = await runCrashScenario({
      engine: TEST_ENGINE,
      env: deployment.env,
      dataDir: deployment.dataDir,
      databaseUrl: deployment.env.DATABASE_URL || undefined,
      senders: 8,
      kills: 1,
      acksPerKill: 300,
      webhook: receiver,
    });
    console.log(describeCrash(report));
  });
  after(async () => {
    await receiver?.close();
    await deployment?.destroy();
  });

  it('kills the server while sends are in flight, after at least 300 acknowledgements', () => {
    const [round] = report.rounds;
    assert.equal(report.rounds.length, 1);
    assert.equal(round!.load.deadlineHit, false, 'the server stopped answering before the kill');
    assert.ok(round!.load.ackedAtKill >= 300);
    assert.ok(round!.load.unanswered.length > 0, 'no request was in flight at the kill');
    assert.equal(round!.load.refused, 0, 'a send was answered with an error under load');
  });

  it('stores every acknowledged message exactly once, with its id, after the kill', () => {
    const [round] = report.rounds;
    assert.deepEqual(round!.afterKill.lostAcked, []);
    assert.deepEqual(round!.afterKill.duplicates, []);
    assert.deepEqual(round!.afterKill.phantoms, []);
    assert.equal(round!.afterKill.ackedStored, round!.load.acked);
    assert.equal(round!.afterKill.unansweredStored + round!.afterKill.unansweredNotStored, round!.load.unanswered.length);
  });

  it('answers each re-sent message 2xx, with its first id when it was stored before the kill (or acknowledged)', () => {
    const resend = report.finalResend;
    assert.equal(resend.resent, report.rounds[0]!.load.unanswered.length);
    assert.deepEqual(resend.failed, []);
    assert.deepEqual(resend.answeredOtherId, []);
    assert.equal(resend.answeredFirstId, report.rounds[0]!.afterKill.unansweredStored);
    assert.equal(resend.storedNow, report.rounds[0]!.afterKill.unansweredNotStored);
    // Each sender's last two acknowledged messages too: a muid committed before the kill, every run.
    assert.equal(resend.acknowledgedResent, 16);
    assert.equal(resend.acknowledgedSameId, 16);
  });

  it('ends with every muid stored exactly once, and conversations that agree with their messages', () => {
    assert.deepEqual(report.final.lostAcked, []);
    assert.deepEqual(report.final.duplicates, []);
    assert.deepEqual(report.final.phantoms, []);
    assert.equal(report.final.ackedStored, report.sentMuids);
    assert.equal(report.final.stored, report.sentMuids);
    assert.deepEqual(report.final.staleConversations, []);
    assert.deepEqual(report.conversationProblems, []);
    assert.deepEqual(report.problems, []);
  });

  it("delivers every acknowledged message's message_sent to the webhook at least once, each copy with the same X-Parley-Delivery", () => {
    assert.ok(report.webhook);
    assert.deepEqual(report.webhook.missing, []);
    assert.deepEqual(report.webhook.mixedDeliveryIds, []);
    assert.ok(report.webhook.received >= report.final.ackedStored);
  });
});
