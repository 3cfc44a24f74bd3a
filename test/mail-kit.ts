import fs from 'node:fs';
import path from 'node:path';

/** The decoded text of every part of an RFC 5322 message (base64 and quoted-printable undone). */
export function decodedParts(raw: string): string[] {
  const parts = raw.split(/\r?\n--[^\r\n]+\r?\n/);
  return parts.map((part) => {
    const split = part.search(/\r?\n\r?\n/);
    const head = split < 0 ? '' : part.slice(0, split);
    const body = split < 0 ? part : part.slice(split).trim();
    if (/content-transfer-encoding:\s*base64/i.test(head))
      return Buffer.from(body, 'base64').toString('utf8');
    if (/content-transfer-encoding:\s*quoted-printable/i.test(head)) {
      const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => `%${hex}`);
      return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/gi, '%25'));
    }
    return body;
  });
}

/** A header's value (first occurrence, unfolded). */
export function headerOf(raw: string, name: string): string | null {
  const head = raw.slice(0, raw.search(/\r?\n\r?\n/));
  const match = new RegExp(`^${name}:[ \\t]*(.*(?:\\r?\\n[ \\t].*)*)`, 'im').exec(head);
  return match ? (match[1] as string).replace(/\r?\n[ \t]+/g, ' ') : null;
}

/** The token of the newest `kind` link mailed to `to` among the outbox's `.eml` files. */
export function outboxLink(dataDir: string, to: string, kind: 'confirm' | 'reset/new'): string {
  const folder = path.join(dataDir, 'outbox');
  const files = fs.existsSync(folder) ? fs.readdirSync(folder).sort().reverse() : [];
  const link = new RegExp(`http://api\\.test/${kind}\\?token=([A-Za-z0-9_-]{43})`);
  for (const file of files) {
    const raw = fs.readFileSync(path.join(folder, file), 'utf8');
    if (headerOf(raw, 'To') !== to) continue;
    for (const part of decodedParts(raw)) {
      const match = link.exec(part);
      if (match) return match[1] as string;
    }
  }
  throw new Error(`no ${kind} mail to ${to}`);
}

/** `outboxLink` once the mail is written: a mail sent after the answer may take a moment (at most 5 s). */
export async function mailedLink(
  dataDir: string,
  to: string,
  kind: 'confirm' | 'reset/new',
): Promise<string> {
  for (let waited = 0; ; waited += 20) {
    try {
      return outboxLink(dataDir, to, kind);
    } catch (error) {
      if (waited >= 5_000) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
