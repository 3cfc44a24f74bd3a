/**
 * A small Server-Sent Events client for tests: a raw HTTP GET whose body is parsed as the WHATWG event
 * stream format (fields `event`, `id`, `data`, comment lines starting with `:`), kept as it arrives.
 */
import http from 'node:http';

export interface SseEvent {
  event: string;
  /** The `id:` field, or null when the event carried none. */
  id: string | null;
  data: string;
}

export interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Events received so far, in order. */
  events: SseEvent[];
  /** Comment lines received so far (without the colon). */
  comments: string[];
  /** The whole body when the status was not 200. */
  body(): string;
  /** Resolves with the events once the server ends the stream. */
  ended: Promise<SseEvent[]>;
  /** Resolves when `predicate` holds for the events received (checked on each one). */
  until(predicate: (events: SseEvent[]) => boolean, timeoutMs?: number): Promise<SseEvent[]>;
  close(): void;
}

/** Opens `url` with `headers` and parses what comes back. */
export function openStream(url: string, headers: Record<string, string>): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      let raw = '';
      let buffer = '';
      let current: { event: string; id: string | null; data: string[] } = { event: '', id: null, data: [] };
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        raw += chunk;
        buffer += chunk;
        let newline = buffer.indexOf('\n');
        while (newline !== -1) {
          const line = buffer.slice(0, newline).replace(/\r$/, '');
          buffer = buffer.slice(newline + 1);
          newline = buffer.indexOf('\n');
          if (line === '') {
            if (current.data.length > 0 || current.event !== '') {
              events.push({
                event: current.event || 'message',
                id: current.id,
                data: current.data.join('\n'),
              });
            }
            current = { event: '', id: null, data: [] };
            for (const wake of waiters) wake();
            continue;
          }
          if (line.startsWith(':')) {
            comments.push(line.slice(1).trim());
            continue;
          }
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') current.event = value;
          else if (field === 'id') current.id = value;
          else if (field === 'data') current.data.push(value);
        }
      });
      const ended = new Promise<SseEvent[]>((done) => {
        response.on('end', () => done(events));
        response.on('close', () => done(events));
      });
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        events,
        comments,
        body: () => raw,
        ended,
        until: (predicate, timeoutMs = 30_000) =>
          new Promise((done, fail) => {
            const check = (): void => {
              if (!predicate(events)) return;
              waiters.delete(check);
              clearTimeout(timer);
              done(events);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`timed out; events so far: ${JSON.stringify(events)}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          }),
        close: () => request.destroy(),
      });
    });
    request.on('error', reject);
  });
}
