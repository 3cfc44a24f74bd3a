import fs from 'node:fs';
import http from 'node:http';

/** VmRSS of a /proc/<pid>/status text, in bytes; null when absent. Exported for its unit test. */
export function parseVmRss(status: string): number | null {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return match?.[1] ? Number(match[1]) * 1024 : null;
}

/** Resident memory of a process now, bytes; null once it is gone. */
export function rssBytes(pid: number): number | null {
  try {
    return parseVmRss(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return null;
  }
}

/** Samples a process's RSS every `intervalMs` until stopped; returns the highest sample. */
export function sampleRss(pid: number, intervalMs = 100): { stop(): { peak: number; samples: number } } {
  let peak = rssBytes(pid) ?? 0;
  let samples = 1;
  const timer = setInterval(() => {
    const rss = rssBytes(pid);
    if (rss === null) return;
    samples++;
    if (rss > peak) peak = rss;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return { peak, samples };
    },
  };
}

/** What the slow readers got. */
export interface SlowReadOutcome {
  /** Body bytes all clients read. */
  bytes: number;
  /** Responses read to their end. */
  completed: number;
  /** Requests that failed (socket error or a status other than 200). */
  errors: number;
}

/**
 * `clients` parallel full downloads of `url`, each reading at most `bytesPerSecond`, for `seconds`: a
 * client that is ahead of its pace stops reading (the socket's receive window closes, so the server's
 * writes back up), which is the case where a server that buffers instead of waiting would grow. A client
 * whose download ends starts the next one; at the end every download still open is cut.
 */
export async function slowDownloads(spec: {
  url: string;
  headers: Readonly<Record<string, string>>;
  clients: number;
  bytesPerSecond: number;
  seconds: number;
}): Promise<SlowReadOutcome> {
  const outcome: SlowReadOutcome = { bytes: 0, completed: 0, errors: 0 };
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.clients });
  const endAt = Date.now() + spec.seconds * 1000;
  const open = new Set<http.ClientRequest>();
  const client = async (): Promise<void> => {
    while (Date.now() < endAt) {
      await new Promise<void>((resolve) => {
        const request = http.get(spec.url, { agent, headers: spec.headers }, (response) => {
          if (response.statusCode !== 200) {
            outcome.errors++;
            response.resume();
            response.once('end', resolve);
            return;
          }
          const started = Date.now();
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            outcome.bytes += chunk.length;
            const aheadMs = (read / spec.bytesPerSecond) * 1000 - (Date.now() - started);
            if (aheadMs > 0) {
              response.pause();
              setTimeout(() => response.resume(), aheadMs).unref();
            }
          });
          response.once('end', () => {
            outcome.completed++;
            resolve();
          });
          response.once('error', () => resolve());
        });
        open.add(request);
        request.once('close', () => {
          open.delete(request);
          resolve();
        });
        request.once('error', () => {
          if (Date.now() < endAt) outcome.errors++;
          resolve();
        });
      });
    }
  };
  const running = Array.from({ length: spec.clients }, client);
  const cut = setTimeout(() => {
    for (const request of open) request.destroy();
  }, spec.seconds * 1000);
  await Promise.all(running);
  clearTimeout(cut);
  agent.destroy();
  return outcome;
}
