// Follows a live agentchat chat with Temporal's own Workflow Streams client for
// TypeScript, and checks its events against the chat's final History. It runs no
// agentchat code: the Go test integration.TestStreamTypeScriptClient starts the dev
// server, a worker and the chat, and hands this test where they are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';

interface Content {
  type: string;
  text?: string;
  callId?: string;
}
interface Message {
  messageId: string;
  role: string;
  contents: Content[] | null;
}
interface StreamEvent {
  type: string;
  turnId?: string;
  messageId?: string;
  attempt?: number;
  text?: string;
  message?: Message;
}

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this test through integration.TestStreamTypeScriptClient`);
  return v;
}

function textOf(m: Message): string {
  return (m.contents ?? []).filter((c) => c.type === 'text').map((c) => c.text ?? '').join('\n');
}

test('a live chat followed with @temporalio/workflow-streams matches its History', async () => {
  const address = env('AGENTCHAT_STREAM_ADDRESS');
  const namespace = env('AGENTCHAT_STREAM_NAMESPACE');
  const chatId = env('AGENTCHAT_STREAM_CHAT');
  const turnId = env('AGENTCHAT_STREAM_TURN');
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace });
    const stream = WorkflowStreamClient.create(client, chatId);
    console.log('SUBSCRIBING'); // the Go test sends the turn once it reads this
    const events: { offset: number; data: StreamEvent }[] = [];
    for await (const item of stream.topic<StreamEvent>('agentchat').subscribe(0, { pollCooldown: 0 })) {
      events.push({ offset: item.offset, data: item.data });
      if (item.data.turnId === turnId && item.data.type === 'turnDone') break;
    }
    assert.equal(events[0]?.data.type, 'turnAccepted');
    for (let i = 1; i < events.length; i++) {
      assert.ok(events[i]!.offset > events[i - 1]!.offset, `offsets increase: ${events[i - 1]!.offset}, ${events[i]!.offset}`);
    }
    const texts = new Map<string, string>();
    const done: Message[] = [];
    let deltas = 0;
    for (const { data } of events) {
      if (data.type === 'textDelta') {
        texts.set(data.messageId!, (texts.get(data.messageId!) ?? '') + data.text);
        deltas++;
      } else if (data.type === 'retry') {
        texts.set(data.messageId!, '');
      } else if (data.type === 'messageDone') {
        done.push(data.message!);
      }
    }
    assert.ok(deltas > 1, `the reply streamed in several deltas (${deltas})`);

    const history = await client.workflow.getHandle(chatId).query<{ messages: Message[] }>('History');
    const byId = new Map(history.messages.map((m) => [m.messageId, m]));
    assert.ok(done.length > 0, 'messages done');
    for (const m of done) {
      const final = byId.get(m.messageId);
      assert.ok(final, `message ${m.messageId} is in the History`);
      assert.deepEqual(m.contents, final.contents);
      if (m.role === 'assistant') {
        assert.equal(texts.get(m.messageId), textOf(final), `the deltas of ${m.messageId} concatenate to its final text`);
      }
    }
  } finally {
    await connection.close();
  }
});
