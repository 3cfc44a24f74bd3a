/**
 * The dashboard's assets: islands written in TypeScript are served as JavaScript stripped at start, with
 * content-hashed links, a year of caching and ETags; vendor files only by their exact names; the islands
 * type-check against the browser's library alone.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from './helpers.ts';
import { Browser, FakePeople } from './web-kit.ts';

const ROOT = path.join(import.meta.dirname, '..');
const CLIENT = path.join(ROOT, 'src', 'web', 'client');
const run = promisify(execFile);

describe('dashboard assets', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ worker: false, people: (container) => new FakePeople(container) });
  });
  after(() => t.close());

  test('islands are served stripped of their types, linked with their hash, cached a year', async () => {
    const page = await new Browser(t).get('/signin');
    const link = /src="(\/assets\/language\.js\?v=([^"]+))"/.exec(page.body);
    assert.ok(link?.[1] && link[2], 'the page links its island with a hash');
    const res = await t.app.inject({ method: 'GET', url: link[1] });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/javascript/);
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(res.headers.etag, `"${link[2]}"`);
    const source = fs.readFileSync(path.join(CLIENT, 'language.ts'), 'utf8');
    assert.equal(res.body, stripTypeScriptTypes(source, { mode: 'strip' }));
    assert.doesNotMatch(res.body, /querySelectorAll<|: HTML/, 'no type syntax left');
    new Function(`return async () => {${res.body.replaceAll(/^import .*$/gm, '')}}`);

    const again = await t.app.inject({
      method: 'GET',
      url: link[1],
      headers: { 'if-none-match': `"${link[2]}"` },
    });
    assert.equal(again.statusCode, 304);
    const stale = await t.app.inject({ method: 'GET', url: '/assets/language.js?v=old' });
    assert.equal(stale.headers['cache-control'], 'no-cache', 'an old hash is not kept for a year');
    assert.equal(again.body, '');
    const css = /href="(\/assets\/site\.css\?v=[^"]+)"/.exec(page.body)?.[1];
    assert.ok(css);
    const style = await t.app.inject({ method: 'GET', url: css });
    assert.match(String(style.headers['content-type']), /^text\/css/);
  });

  test('every island parses as JavaScript after stripping', () => {
    for (const file of fs.readdirSync(CLIENT).filter((f) => f.endsWith('.ts'))) {
      const code = stripTypeScriptTypes(fs.readFileSync(path.join(CLIENT, file), 'utf8'), { mode: 'strip' });
      // Islands are modules: their imports and exports are taken off so the rest parses as a function body.
      const body = code
        .replaceAll(/^import\b[^;]*?from\s*['"][^'"]+['"];?/gms, '')
        .replaceAll(/^export (default )?/gm, '');
      assert.doesNotThrow(() => new Function(`return async () => {${body}}`), file);
    }
  });

  test('vendor files are served by exact name only', async () => {
    const chart = await t.app.inject({ method: 'GET', url: '/assets/vendor/chart.js' });
    assert.equal(chart.statusCode, 200);
    assert.match(String(chart.headers['content-type']), /^text\/javascript/);
    assert.ok(chart.body.length > 50_000);
    for (const name of ['model-viewer.js', 'preact.js', 'htm.js']) {
      const res = await t.app.inject({ method: 'GET', url: `/assets/vendor/${name}` });
      assert.equal(res.statusCode, 200, name);
      assert.equal(res.headers['cache-control'], 'no-cache', 'a bare name is revalidated');
      assert.ok(res.headers.etag);
    }
    for (const url of [
      '/assets/vendor/',
      '/assets/vendor/package.json',
      '/assets/vendor/..%2F..%2Fpackage.json',
      '/assets/vendor/%2e%2e%2Fpackage.json',
      '/assets/..%2Fapp.ts',
      '/assets/copy.ts',
      '/assets/vendor/toString',
    ]) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.ok(res.statusCode === 404, `${url} answered ${res.statusCode}`);
      assert.doesNotMatch(res.body, /"name":|import /, url);
    }
  });

  test('the islands type-check with the browser library and no Node types', async () => {
    const tsc = path.join(ROOT, 'node_modules', '.bin', 'tsc');
    await run(tsc, ['-p', path.join(CLIENT, 'tsconfig.json')]);
  });
});
