import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import { randomBase62 } from '../lib/index.ts';

/** One message to one person. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The links the message carries, logged when it goes to the outbox. */
  links: readonly string[];
}

/** Sends mail; the port behind which SMTP and the outbox sit (CONTRACT §13). */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** The part of nodemailer's transporter used here. */
interface Transport {
  sendMail(mail: {
    from: string;
    to: string;
    subject: string;
    text: string;
    html: string;
  }): Promise<{ message?: unknown }>;
  close(): void;
}

/**
 * How long an SMTP server may take to accept the connection, to greet, or to answer any one command
 * (nodemailer's own defaults are 2 minutes, 30 seconds and 10 minutes). A request waits for its mail up to
 * MAIL_WAIT_MS (people-service.ts) and a stopping service for every mail still going out, so a server that
 * stops answering must not hold a mail for minutes. `SMTP_URL`'s query (`?socketTimeout=…`) still wins.
 */
export const SMTP_TIMEOUT_MS = 15_000;

/** Sends every message through the SMTP server of `SMTP_URL`. */
export class SmtpMailer implements Mailer {
  readonly #transport: Transport;
  readonly #from: string;

  constructor(options: { smtpUrl: string; from: string; timeoutMs?: number }) {
    const timeoutMs = options.timeoutMs ?? SMTP_TIMEOUT_MS;
    this.#transport = nodemailer.createTransport({
      url: options.smtpUrl,
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    }) as unknown as Transport;
    this.#from = options.from;
  }

  async send(message: MailMessage): Promise<void> {
    const { links: _links, ...mail } = message;
    await this.#transport.sendMail({ from: this.#from, ...mail });
  }

  close(): void {
    this.#transport.close();
  }
}

/**
 * Writes every message as an `.eml` file (RFC 5322, built by nodemailer itself) into a folder and logs
 * its links, so a service without SMTP still lets people confirm and reset (CONTRACT §13).
 */
export class OutboxMailer implements Mailer {
  readonly #transport: Transport;
  readonly #from: string;
  readonly #dir: string;
  readonly #log: Logger | null;

  constructor(options: { dir: string; from: string; log?: Logger }) {
    this.#transport = nodemailer.createTransport({
      streamTransport: true,
      buffer: true,
      newline: 'windows',
    }) as unknown as Transport;
    this.#from = options.from;
    this.#dir = options.dir;
    this.#log = options.log ?? null;
  }

  async send(message: MailMessage): Promise<void> {
    const { links, ...mail } = message;
    const info = await this.#transport.sendMail({ from: this.#from, ...mail });
    await mkdir(this.#dir, { recursive: true });
    // Time first, so a listing of the folder reads in sending order.
    const file = path.join(
      this.#dir,
      `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBase62(8)}.eml`,
    );
    await writeFile(file, info.message as Buffer, { mode: 0o600 });
    this.#log?.info(
      { mail: { to: message.to, subject: message.subject, file, links } },
      'mail written to the outbox',
    );
  }

  close(): void {
    this.#transport.close();
  }
}

/** SMTP when `smtpUrl` is set, else the outbox `DATA_DIR/outbox/`. */
export function createMailer(options: {
  smtpUrl: string | null;
  from: string;
  dataDir: string;
  log?: Logger;
}): Mailer {
  return options.smtpUrl
    ? new SmtpMailer({ smtpUrl: options.smtpUrl, from: options.from })
    : new OutboxMailer({ dir: path.join(options.dataDir, 'outbox'), from: options.from, log: options.log });
}
