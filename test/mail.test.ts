import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import { createMailer, mailOf, OutboxMailer, SmtpMailer } from '../src/mail/index.ts';
import { decodedParts, headerOf } from './mail-kit.ts';

const LINK = 'https://studio.example/confirm?token=AbC_-0123456789abcdefghijklmnopqrstuvwxyzABCDE';

describe('mail: the outbox', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-mail-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('without SMTP_URL each mail is an RFC 5322 .eml file in DATA_DIR/outbox, its links logged', async () => {
    const lines: string[] = [];
    const log = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const mailer = createMailer({
      smtpUrl: null,
      from: 'Studio <no-reply@studio.example>',
      dataDir: dir,
      log,
    });
    assert.ok(mailer instanceof OutboxMailer);
    await mailer.send(mailOf('confirm', 'ru', 'ann@example.com', LINK));
    await mailer.send(mailOf('reset', 'en', 'bob@example.com', LINK.replace('confirm', 'reset/new')));
    const files = fs.readdirSync(path.join(dir, 'outbox')).sort();
    assert.equal(files.length, 2);
    assert.ok(files.every((f) => f.endsWith('.eml')));
    const raw = fs.readFileSync(path.join(dir, 'outbox', files[0] as string), 'utf8');
    assert.equal(headerOf(raw, 'To'), 'ann@example.com');
    assert.equal(headerOf(raw, 'From'), 'Studio <no-reply@studio.example>');
    assert.match(headerOf(raw, 'Message-ID') ?? '', /^<.+@.+>$/);
    assert.ok(headerOf(raw, 'Date'));
    assert.match(headerOf(raw, 'Content-Type') ?? '', /^multipart\/alternative/);
    // The subject is an encoded word (RFC 2047): Russian, not mojibake.
    assert.match(headerOf(raw, 'Subject') ?? '', /^=\?UTF-8\?/);
    const parts = decodedParts(raw);
    const text = parts.find((p) => p.includes('Откройте ссылку') && !p.includes('<'));
    const html = parts.find((p) => p.includes('<a href='));
    assert.ok(text?.includes(LINK), 'the text part carries the link');
    assert.ok(html?.includes(`href="${LINK}"`), 'the HTML part links it');
    assert.ok(lines.some((l) => l.includes('mail written to the outbox') && l.includes(LINK)));
  });

  test('templates escape the link in HTML and speak both languages', () => {
    const en = mailOf('reset', 'en', 'a@example.com', 'https://x.example/reset/new?token=a&b="c"');
    assert.equal(en.subject, 'Reset your password');
    assert.ok(en.html.includes('token=a&#38;b=&#34;c&#34;'));
    assert.ok(!en.html.includes('"c"'));
    assert.equal(mailOf('confirm', 'ru', 'a@example.com', LINK).subject, 'Подтвердите эл. почту');
  });
});

describe('mail: SMTP', () => {
  let server: SMTPServer;
  let port: number;
  const received: Array<{ from: string; to: string[]; user: string | undefined; raw: string }> = [];
  before(async () => {
    server = new SMTPServer({
      secure: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authMethods: ['PLAIN', 'LOGIN'],
      onAuth(auth, _session, callback) {
        if (auth.username === 'mailer' && auth.password === 'p@ss word')
          return callback(null, { user: 'mailer' });
        return callback(new Error('Invalid username or password'));
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            user: session.user as string | undefined,
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.server.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('SMTP_URL sends through the server, signed in with the URL’s user and password', async () => {
    const mailer = createMailer({
      smtpUrl: `smtp://mailer:${encodeURIComponent('p@ss word')}@127.0.0.1:${port}`,
      from: 'no-reply@studio.example',
      dataDir: '/nonexistent',
    });
    assert.ok(mailer instanceof SmtpMailer);
    await mailer.send(mailOf('confirm', 'en', 'cat@example.com', LINK));
    mailer.close();
    assert.equal(received.length, 1);
    const got = received[0]!;
    assert.equal(got.user, 'mailer');
    assert.equal(got.from, 'no-reply@studio.example');
    assert.deepEqual(got.to, ['cat@example.com']);
    assert.equal(headerOf(got.raw, 'Subject'), 'Confirm your e-mail');
    assert.ok(decodedParts(got.raw).some((p) => p.includes(LINK)));
  });

  test('a wrong SMTP password fails the send (the service logs it; the person can ask again)', async () => {
    const mailer = new SmtpMailer({
      smtpUrl: `smtp://mailer:wrong@127.0.0.1:${port}`,
      from: 'no-reply@studio.example',
    });
    await assert.rejects(mailer.send(mailOf('confirm', 'en', 'dan@example.com', LINK)));
    mailer.close();
    assert.equal(received.length, 1);
  });

  test('an SMTP server that stops answering fails the send within the timeout, not minutes later', {
    timeout: 10_000,
  }, async () => {
    // Takes the message and never answers it: nodemailer alone would wait 10 minutes (its socket timeout)
    // and hold the sign-up that waits for its mail as long.
    const silent = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream) {
        stream.resume();
      },
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.server.address() as { port: number }).port;
    const mailer = new SmtpMailer({
      smtpUrl: `smtp://127.0.0.1:${silentPort}`,
      from: 'no-reply@studio.example',
      timeoutMs: 300,
    });
    try {
      const started = Date.now();
      await assert.rejects(mailer.send(mailOf('confirm', 'en', 'eve@example.com', LINK)), /Timeout/);
      assert.ok(Date.now() - started < 5_000);
    } finally {
      mailer.close();
      silent.close(() => {});
    }
  });
});
