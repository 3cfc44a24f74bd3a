/**
 * A loopback TCP proxy for fault tests: it passes traffic to a real server (PostgreSQL, the S3 fake) until
 * told to fail. `cut` ends every open connection and then refuses new ones (nothing listens on the port) or
 * blackholes them (accepted, never answered); `answer` replies to every new connection with a fixed text,
 * such as an HTTP 500; `restore` passes traffic again on the same port; `close` ends everything.
 */
import net from 'node:net';

export type FaultMode = 'pass' | 'refuse' | 'blackhole' | 'answer';

export class FaultProxy {
  readonly port: number;
  #server: net.Server;
  #mode: FaultMode = 'pass';
  #answer = '';
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<net.Socket>();

  private constructor(server: net.Server, port: number, target: { host: string; port: number }) {
    this.#server = server;
    this.port = port;
    this.#target = target;
  }

  /** Starts a proxy to `target` on a free loopback port. */
  static async start(target: { host: string; port: number }): Promise<FaultProxy> {
    let proxy: FaultProxy | null = null;
    const server = net.createServer((socket) => proxy?.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy = new FaultProxy(server, (server.address() as net.AddressInfo).port, target);
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's (a database URL or an S3 endpoint). */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  get mode(): FaultMode {
    return this.#mode;
  }

  /** Ends every open connection; new ones are refused or blackholed until `restore`. */
  async cut(mode: 'refuse' | 'blackhole'): Promise<void> {
    this.#mode = mode;
    this.#dropAll();
    if (mode === 'refuse') await this.#stopListening();
  }

  /** New connections get `text` and are closed; open ones are ended first. */
  async answer(text: string): Promise<void> {
    await this.restore();
    this.#mode = 'answer';
    this.#answer = text;
    this.#dropAll();
  }

  /**
   * Passes traffic on new connections again. Blackholed connections stay open and silent, like the
   * half-open connections a network partition leaves behind: only a client's own timeout ends them.
   */
  async restore(): Promise<void> {
    if (this.#mode === 'refuse') {
      await new Promise<void>((resolve, reject) => {
        this.#server.once('error', reject);
        this.#server.listen(this.port, '127.0.0.1', () => resolve());
      });
    }
    this.#mode = 'pass';
  }

  async close(): Promise<void> {
    this.#dropAll();
    if (this.#mode !== 'refuse') await this.#stopListening();
  }

  private accept(socket: net.Socket): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => {});
    if (this.#mode === 'blackhole') return;
    if (this.#mode === 'answer') {
      socket.once('data', () => socket.end(this.#answer));
      return;
    }
    const upstream = net.connect(this.#target);
    this.#sockets.add(upstream);
    upstream.on('close', () => {
      this.#sockets.delete(upstream);
      socket.destroy();
    });
    upstream.on('error', () => {});
    socket.on('close', () => upstream.destroy());
    socket.pipe(upstream);
    upstream.pipe(socket);
  }

  #dropAll(): void {
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
  }

  #stopListening(): Promise<void> {
    // close() waits for open connections, which #dropAll has just ended.
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** Host and port of a URL (a database URL or an S3 endpoint). */
export function targetOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port) };
}
