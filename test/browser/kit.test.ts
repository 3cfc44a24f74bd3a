import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import { PNG } from 'pngjs';
import { ROOT } from '../processes.ts';
import { launchBrowser, newContext, screenshot, VIEWPORT } from './kit.ts';
import { linkTo, parseMail, readOutbox, startSmtpServer, waitForMail } from './mail.ts';

const LONG_LINK = `http://127.0.0.1:4321/confirm?token=${'A-b_9'.repeat(12)}`;

/** A real message as nodemailer builds it: Russian subject, quoted-printable text with a long link. */
async function buildMessage(to: string): Promise<string> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  const info = await transport.sendMail({
    from: 'noreply@example.com',
    to,
    subject: 'Подтвердите адрес',
    text: `Здравствуйте! Откройте ссылку, чтобы подтвердить адрес:\n${LONG_LINK}\n`,
    html: `<p><a href="${LONG_LINK}">Подтвердить</a></p>`,
  });
  return String(info.message);
}

describe('browser test kit: mail', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-kit-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('parseMail decodes the subject, the text part and its links', async () => {
    const mail = parseMail(await buildMessage('Ada <ada@example.com>'));
    assert.equal(mail.subject, 'Подтвердите адрес');
    assert.match(mail.to, /ada@example\.com/);
    assert.match(mail.text, /^Здравствуйте!/);
    assert.deepEqual(mail.links, [LONG_LINK]);
    assert.equal(linkTo(mail, '/confirm'), LONG_LINK);
    assert.throws(() => linkTo(mail, '/reset/new'), /no \/reset\/new link/);
  });

  test('readOutbox and waitForMail read DATA_DIR/outbox/*.eml in name order', async () => {
    assert.deepEqual(readOutbox(dir), []);
    fs.mkdirSync(path.join(dir, 'outbox'));
    fs.writeFileSync(path.join(dir, 'outbox', '1.eml'), await buildMessage('ada@example.com'));
    fs.writeFileSync(path.join(dir, 'outbox', '2.eml'), await buildMessage('bob@example.com'));
    fs.writeFileSync(path.join(dir, 'outbox', 'notes.txt'), 'not a mail');
    assert.deepEqual(
      readOutbox(dir).map((m) => m.to),
      ['ada@example.com', 'bob@example.com'],
    );
    const mail = await waitForMail(() => readOutbox(dir), 'BOB@example.com');
    assert.equal(mail.to, 'bob@example.com');
  });

  test('the SMTP server takes mail only from the right login and keeps it', async () => {
    const smtp = await startSmtpServer('u1', 'p1-secret');
    try {
      assert.match(smtp.url, /^smtp:\/\/u1:p1-secret@127\.0\.0\.1:\d+$/);
      await nodemailer.createTransport(smtp.url).sendMail({
        from: 'noreply@example.com',
        to: 'grace@example.com',
        subject: 'Hello',
        text: `Open ${LONG_LINK}`,
      });
      const [received] = smtp.messages;
      assert.ok(received);
      assert.equal(received.subject, 'Hello');
      assert.equal(linkTo(received, '/confirm'), LONG_LINK);

      const wrong = new URL(smtp.url);
      wrong.password = 'guess';
      await assert.rejects(
        nodemailer
          .createTransport(wrong.toString())
          .sendMail({ from: 'a@example.com', to: 'b@example.com', text: 'x' }),
      );
      assert.equal(smtp.refusedLogins, 1);
      assert.equal(smtp.messages.length, 1);
    } finally {
      await smtp.close();
    }
  });
});

describe('browser test kit: chromium', () => {
  test('launches Debian chromium and takes a full-page screenshot at the fixed width', async () => {
    const browser = await launchBrowser();
    try {
      const page = await (await newContext(browser)).newPage();
      await page.setContent(
        '<h1 style="animation: spin 1s infinite">Kit</h1><div style="height:1200px"></div>',
      );
      assert.equal(await page.evaluate(() => navigator.language), 'en-US');
      const file = await screenshot(page, 'kit-selftest');
      const png = PNG.sync.read(fs.readFileSync(file));
      assert.equal(png.width, VIEWPORT.width);
      assert.ok(png.height > VIEWPORT.height, 'the whole page, not only the viewport');
      fs.rmSync(file);
    } finally {
      await browser.close();
    }
  });
});

describe('scripts/ensure-chromium.sh', () => {
  const script = path.join(ROOT, 'scripts', 'ensure-chromium.sh');

  test('is quiet and does nothing when the browser is there', () => {
    const run = spawnSync('bash', [script], { env: { ...process.env, CHROMIUM_PATH: process.execPath } });
    assert.equal(run.status, 0);
    assert.equal(`${run.stdout}${run.stderr}`, '');
  });

  test('fails loudly, saying why, when it cannot install', () => {
    // A PATH with the shell's tools but neither apt-get nor sudo: root lacks apt-get, others lack sudo.
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-nobin-'));
    try {
      for (const tool of ['id', 'mktemp', 'cat', 'rm']) {
        const found = spawnSync('bash', ['-c', `command -v ${tool}`])
          .stdout.toString()
          .trim();
        fs.symlinkSync(found, path.join(bin, tool));
      }
      const run = spawnSync('/bin/bash', [script], {
        env: { PATH: bin, CHROMIUM_PATH: path.join(bin, 'no-chromium') },
      });
      assert.equal(run.status, 1);
      assert.match(
        String(run.stderr),
        /ensure-chromium: .*no-chromium is missing and (there is no apt-get|installing it needs root)/,
      );
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });
});
