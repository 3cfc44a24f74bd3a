import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';

/** A received mail as the browser tests read it. */
export interface Mail {
  to: string;
  subject: string;
  /** The plain text part (decoded). */
  text: string;
  /** Every http(s) link of the text part, in order. */
  links: string[];
  raw: string;
}

/** Headers of one MIME entity, names lowercased, folded lines joined. */
function splitEntity(raw: string): { headers: Map<string, string>; body: string } {
  const normalised = raw.replaceAll('\r\n', '\n');
  const end = normalised.indexOf('\n\n');
  const head = end === -1 ? normalised : normalised.slice(0, end);
  const body = end === -1 ? '' : normalised.slice(end + 2);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\n[ \t]+/g, ' ').split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const soft = text.replace(/=\n/g, '');
  for (let i = 0; i < soft.length; i++) {
    const hex = soft.slice(i + 1, i + 3);
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i] ?? '', 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeBody(headers: Map<string, string>, body: string): string {
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`) of a header. */
function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_all, _charset: string, kind: string, data: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeQuotedPrintable(data.replaceAll('_', ' ')),
    );
}

/** The text/plain part of an entity (searching multipart bodies), decoded. */
function plainText(raw: string): string | null {
  const { headers, body } = splitEntity(raw);
  const type = headers.get('content-type') ?? 'text/plain';
  if (/^multipart\//i.test(type)) {
    const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
    if (!boundary) return null;
    for (const part of body.split(`--${boundary}`).slice(1)) {
      if (part.startsWith('--')) break;
      const found = plainText(part.replace(/^\n/, ''));
      if (found !== null) return found;
    }
    return null;
  }
  return /^text\/plain/i.test(type) ? decodeBody(headers, body) : null;
}

/** Parses an RFC 5322 message (what nodemailer writes or sends) into the parts the tests look at. */
export function parseMail(raw: string): Mail {
  const { headers } = splitEntity(raw);
  const text = plainText(raw) ?? '';
  return {
    to: decodeHeader(headers.get('to') ?? ''),
    subject: decodeHeader(headers.get('subject') ?? ''),
    text,
    links: [...text.matchAll(/https?:\/\/[^\s<>"')]+/g)].map((m) => m[0]),
    raw,
  };
}

/** The first link of a mail whose path is `pathname` (e.g. `/confirm`). */
export function linkTo(mail: Mail, pathname: string): string {
  const link = mail.links.find((l) => new URL(l).pathname === pathname);
  if (!link) throw new Error(`no ${pathname} link in the mail "${mail.subject}":\n${mail.text}`);
  return link;
}

/** Every mail of `DATA_DIR/outbox/*.eml`, oldest file name first. */
export function readOutbox(dataDir: string): Mail[] {
  const dir = path.join(dataDir, 'outbox');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.eml'))
    .sort()
    .map((name) => parseMail(fs.readFileSync(path.join(dir, name), 'utf8')));
}

/** Waits (up to 15 s) until `list()` holds a mail to `to` matching `match`, and returns the newest one. */
export async function waitForMail(
  list: () => Mail[],
  to: string,
  match: (mail: Mail) => boolean = () => true,
): Promise<Mail> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = list().filter((m) => m.to.toLowerCase().includes(to.toLowerCase()) && match(m));
    const last = found.at(-1);
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`no mail to ${to} arrived`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A real SMTP server on 127.0.0.1 that requires AUTH and keeps every message it accepts. */
export interface SmtpCatcher {
  /** `smtp://user:pass@127.0.0.1:port`, what SMTP_URL takes. */
  url: string;
  messages: Mail[];
  /** Logins refused for a wrong user name or password. */
  refusedLogins: number;
  close(): Promise<void>;
}

export async function startSmtpServer(user = 'mailer', pass = 'mail-secret-1'): Promise<SmtpCatcher> {
  const catcher: Omit<SmtpCatcher, 'url' | 'close'> = { messages: [], refusedLogins: 0 };
  const server = new SMTPServer({
    // Plain SMTP on loopback: no STARTTLS offered (its default certificate is self-signed), so AUTH
    // goes over the unencrypted connection, which only a test server may allow.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: false,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === pass) return callback(null, { user });
      catcher.refusedLogins += 1;
      return callback(new Error('Invalid username or password'));
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        catcher.messages.push(parseMail(Buffer.concat(chunks).toString('utf8')));
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return Object.assign(catcher, {
    url: `smtp://${user}:${pass}@127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as SmtpCatcher;
}
