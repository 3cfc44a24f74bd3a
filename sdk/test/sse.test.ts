/** The event-stream parser follows the WHATWG rules, whatever the chunk boundaries. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseEventStream, type SseEvent } from '../src/index.ts';

/** A body delivering `text` in the given chunks. */
function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

const retries: number[] = [];
async function parse(chunks: string[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of parseEventStream(body(chunks), { onRetry: (ms) => retries.push(ms) })) {
    events.push(event);
  }
  return events;
}

const TEXT =
  ': keep-alive\n' +
  'event: task\nid: 1\ndata: {"a":\ndata: 1}\n\n' +
  'data:no space\r\n\r\n' +
  'event: done\rid: 2\rdata: last\r\r' +
  'retry: 2500\nevent: task\ndata\n\n' +
  'retry: soon\n\n' +
  'event: ignored-without-data\n\n' +
  'data: cut off';

const EXPECTED: SseEvent[] = [
  { event: 'task', id: '1', data: '{"a":\n1}' },
  { event: 'message', id: null, data: 'no space' },
  { event: 'done', id: '2', data: 'last' },
  { event: 'task', id: null, data: '' },
];

describe('parseEventStream', () => {
  test('comments, multi-line data, ids, LF/CRLF/CR line ends, events without data dropped', async () => {
    retries.length = 0;
    assert.deepEqual(await parse([TEXT]), EXPECTED);
    assert.deepEqual(retries, [2500]);
  });

  test('the same events whatever the chunk boundaries (CRLF split across chunks included)', async () => {
    for (let size = 1; size <= 7; size++) {
      const chunks: string[] = [];
      for (let i = 0; i < TEXT.length; i += size) chunks.push(TEXT.slice(i, i + size));
      assert.deepEqual(await parse(chunks), EXPECTED, `chunks of ${size}`);
    }
  });

  test('multi-byte characters split between chunks decode whole', async () => {
    const bytes = new TextEncoder().encode('data: привет\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]));
        controller.close();
      },
    });
    const events: SseEvent[] = [];
    for await (const event of parseEventStream(stream)) events.push(event);
    assert.equal(events[0]?.data, 'привет');
  });
});
