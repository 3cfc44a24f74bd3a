/** One event of a `text/event-stream` body. */
export interface SseEvent {
  /** The `event:` field. (Default: `message`) */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The `id:` field of this event, or null when it carried none. */
  id: string | null;
}

/** Options of `parseEventStream`. */
export interface ParseOptions {
  /** Called with each `retry:` field (milliseconds): the reconnection delay the server asks for. */
  onRetry?: (ms: number) => void;
}

/**
 * Parses an event stream by the WHATWG rules (html.spec.whatwg.org, "Event stream interpretation"): lines
 * end with CRLF, LF or CR; a line starting with `:` is a comment; `field: value` loses one leading space;
 * `data` lines accumulate; a blank line dispatches; `retry` applies at once, event or not; an event without data is dropped; an `id` containing NUL
 * is ignored; a last event without its blank line is dropped (the connection broke in the middle of it).
 */
export async function* parseEventStream(
  body: ReadableStream<Uint8Array>,
  options: ParseOptions = {},
): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id: string | null = null;
  let hasData = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (;;) {
        const end = buffer.search(/\r\n|\r|\n/);
        // A lone CR at the end of a chunk may be the first half of CRLF: wait for the next chunk.
        if (end === -1 || (!done && end === buffer.length - 1 && buffer[end] === '\r')) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (hasData) yield { event: event || 'message', data: data.join('\n'), id };
          data = [];
          event = '';
          id = null;
          hasData = false;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') {
          data.push(value);
          hasData = true;
        } else if (field === 'event') event = value;
        else if (field === 'id' && !value.includes('\0')) id = value;
        else if (field === 'retry' && /^\d+$/.test(value)) options.onRetry?.(Number(value));
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => {});
  }
}
