/**
 * The verification examples of docs/webhooks.md run as written: the Node receiver with the
 * `standardwebhooks` package, and the `node:crypto` function, against calls signed as the sender signs them.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { newSecret, signDelivery } from '../src/events/index.ts';
import { freePort, ROOT } from './processes.ts';

const doc = fs.readFileSync(path.join(ROOT, 'docs/webhooks.md'), 'utf8');
const blocks = [...doc.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1] as string);

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function writeModule(code: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-docs-'));
  dirs.push(dir);
  const file = path.join(dir, 'example.mjs');
  // The package as this project has it installed.
  fs.writeFileSync(file, code.replace("'standardwebhooks'", `'${import.meta.resolve('standardwebhooks')}'`));
  return file;
}

describe('docs/webhooks.md verification examples', () => {
  const secret = newSecret();
  const body = JSON.stringify({
    type: 'task.succeeded',
    timestamp: new Date().toISOString(),
    data: { id: 't-1' },
  });
  const good = signDelivery('msg_docs', new Date(), body, [secret]);
  const rotated = signDelivery('msg_docs', new Date(), body, [newSecret(), secret]);
  const forged = signDelivery('msg_docs', new Date(), body, [newSecret()]);

  test('the node:crypto function accepts our signatures (also among two) and refuses others', async () => {
    const block = blocks.find((b) => b.includes('function verify('));
    assert.ok(block, 'the node:crypto example is in the page');
    const { verify } = (await import(pathToFileURL(writeModule(`${block}\nexport { verify };\n`)).href)) as {
      verify: (secret: string, headers: Record<string, string>, body: string) => boolean;
    };
    assert.equal(verify(secret, { ...good }, body), true);
    assert.equal(verify(secret, { ...rotated }, body), true);
    assert.equal(verify(secret, { ...forged }, body), false);
    assert.equal(verify(secret, { ...good }, `${body} `), false, 'a changed body');
  });

  test('the standardwebhooks receiver answers 204 to a signed call and 400 to a forged one', async () => {
    const block = blocks.find((b) => b.includes('new Webhook('));
    assert.ok(block, 'the standardwebhooks example is in the page');
    const port = await freePort();
    const file = writeModule(block.replace('.listen(3000)', `.listen(${port}, '127.0.0.1')`));
    const child = spawn(process.execPath, [file], {
      env: { ...process.env, WEBHOOK_SECRET: secret },
      stdio: 'pipe',
    });
    try {
      const post = async (headers: Record<string, string>): Promise<number> => {
        for (let i = 0; ; i++) {
          try {
            const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers, body });
            return res.status;
          } catch (error) {
            if (i > 100) throw error;
            await new Promise((r) => setTimeout(r, 50));
          }
        }
      };
      assert.equal(await post({ ...good }), 204);
      assert.equal(await post({ ...rotated }), 204);
      assert.equal(await post({ ...forged }), 400);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
