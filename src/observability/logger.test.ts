import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger, REDACTED, safeUrl, scrubSecrets, secretsOfUrl } from './logger.ts';

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

test('safeUrl takes out callback and upload tokens and secret query values', () => {
  const cases: Array<[string, string]> = [
    ['/v1/tasks/abc', '/v1/tasks/abc'],
    ['/v1/callbacks/suno/s3cr3t-token', `/v1/callbacks/suno/${REDACTED}`],
    ['/v1/callbacks/suno/s3cr3t-token/more?x=1', `/v1/callbacks/suno/${REDACTED}/more?x=1`],
    ['/V1/CALLBACKS/suno/tok', `/V1/CALLBACKS/suno/${REDACTED}`],
    ['/v1/tasks?limit=5&token=abc&status=queued', `/v1/tasks?limit=5&token=${REDACTED}&status=queued`],
    [
      '/x?api_key=1&Password=2&access_token=3',
      `/x?api_key=${REDACTED}&Password=${REDACTED}&access_token=${REDACTED}`,
    ],
    ['/x?%74oken=abc', `/x?%74oken=${REDACTED}`],
    ['/x?X-Amz-Signature=abc&cursor=c', `/x?X-Amz-Signature=${REDACTED}&cursor=c`],
    ['/x?flag', '/x?flag'],
    // Where a client may put the credentials of a header or a cookie: the service's and the usual names.
    [
      '/v1/me?Authorization=k1&auth=k2&x-api-key=k3&cookie=k4&session=k5',
      `/v1/me?Authorization=${REDACTED}&auth=${REDACTED}&x-api-key=${REDACTED}&cookie=${REDACTED}&session=${REDACTED}`,
    ],
    [
      '/keys?gta_session=s1&gta_console=s2&gta_reset=s3&_csrf=c1&x-csrf-token=c2&gta_csrf=c3&lang=ru',
      `/keys?gta_session=${REDACTED}&gta_console=${REDACTED}&gta_reset=${REDACTED}&_csrf=${REDACTED}&x-csrf-token=${REDACTED}&gta_csrf=${REDACTED}&lang=ru`,
    ],
    ['/reset/new?token[]=abc&token%5B0%5D=def', `/reset/new?token[]=${REDACTED}&token%5B0%5D=${REDACTED}`],
    ['/files/vRqeBG5TyUZeg9gvhMZ0wlvPxrofTkco/a.png', `/files/${REDACTED}/a.png`],
    ['/files/vRqeBG5TyUZeg9gvhMZ0wlvPxrofTkco', `/files/${REDACTED}`],
    ['/FILES/tok/a.png?lang=ru', `/FILES/${REDACTED}/a.png?lang=ru`],
    // Escapes the router decodes do not hide a token.
    ['/%66iles/vRqeBG5TyUZeg9gvhMZ0wlvPxrofTkco/a.png', `/files/${REDACTED}/a.png`],
    ['/fil%65s/tok?x=1', `/files/${REDACTED}?x=1`],
    ['/v1/%63allbacks/suno/s3cr3t-token', `/v1/callbacks/suno/${REDACTED}`],
    ['/files/%D1%82%D0%B5/a.png', `/files/${REDACTED}/a.png`],
    ['/v1/tasks/%D1%82%D0%B5', '/v1/tasks/%D1%82%D0%B5'],
    // Near misses that open nothing still carry a token that works.
    ['//files/vRqeBG5TyUZeg9gvhMZ0wlvPxrofTkco/a.png', `//files/${REDACTED}/a.png`],
    ['/./files/tok/a.png', `/./files/${REDACTED}/a.png`],
    ['/%2Ffiles/tok/a.png', `/%2Ffiles/${REDACTED}/a.png`],
    ['/files%2Ftok/a.png', `/files%2F${REDACTED}/a.png`],
    ['//v1/callbacks/suno/s3cr3t-token', `//v1/callbacks/suno/${REDACTED}`],
    // An upload's id under /v1/files opens nothing without a key: it stays readable.
    ['/v1/files/01a229cb-5283-731f-a3b4-a8ade168f79b', '/v1/files/01a229cb-5283-731f-a3b4-a8ade168f79b'],
    // An absolute-form target (`GET http://user:pass@host/… HTTP/1.1`) is routed too: its user info goes.
    ['http://bob:hunter2-pass@127.0.0.1:8080/v1/tasks', `http://${REDACTED}@127.0.0.1:8080/v1/tasks`],
    ['HTTPS://bob@example.com/v1/tasks?x=a@b', `HTTPS://${REDACTED}@example.com/v1/tasks?x=a@b`],
    ['http://a:b%40c@h/files/tok/a.png', `http://${REDACTED}@h/files/${REDACTED}/a.png`],
    ['http://127.0.0.1:8080/v1/tasks?by=a@b', 'http://127.0.0.1:8080/v1/tasks?by=a@b'],
    ['/v1/tasks?next=http://u:p@h/', '/v1/tasks?next=http://u:p@h/'],
  ];
  for (const [url, shown] of cases) assert.equal(safeUrl(url), shown, url);
});

test('a logged url is bounded, and a secret across the bound is not written in part', () => {
  const out = capture();
  const token = 'admin-token-0123456789';
  const key = `gta_${'A1b2C3d4'.repeat(4)}`;
  const log = createLogger({ level: 'info', destination: out.stream, secrets: [token] });
  log.info({ url: `/${'a'.repeat(1_000)}` }, 'request');
  // Wherever the cut falls inside the secret, none of its characters past the first few are written.
  for (let pad = 280; pad < 300; pad++) {
    log.info({ url: safeUrl(`/v1/tasks?x=${'a'.repeat(pad)}&q=${token}&k=${key}`) }, 'request');
    log.info({ url: safeUrl(`/v1/tasks?x=${'a'.repeat(pad + 8)}&k=${key}`) }, 'request');
  }
  const [long, ...lines] = out
    .text()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { url: string });
  assert.equal(long?.url.length, 301);
  for (const { url } of lines) {
    assert.ok(url.length <= 301, url);
    assert.ok(!url.includes(token.slice(0, 12)) && !url.includes(key.slice(0, 8)), url);
  }
});

test('scrubSecrets blanks key, webhook-secret and bearer shapes and the exact secrets given', () => {
  const key = `gta_${'A1b2C3d4'.repeat(4)}`;
  const line = `{"msg":"x ${key} whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw Bearer abc.def Basic dXNlcjpw op-token-12345678"}`;
  const out = scrubSecrets(line, ['op-token-12345678']);
  for (const secret of [key, 'whsec_MfKQ', 'abc.def', 'dXNlcjpw', 'op-token-12345678'])
    assert.ok(!out.includes(secret), secret);
  assert.match(out, /Bearer \[redacted\]/);
  assert.equal(scrubSecrets('gta_tasks_created_total'), 'gta_tasks_created_total', 'metric names stay');
  // A bearer or basic credential written into a URL, its space escaped (`%20`, `+`), or after a digit.
  for (const escaped of [
    '/v1/me?h=Bearer%20opaque-cred-1',
    '/v1/me?h=Basic+opaque-cred-1',
    '/v1/me?h=bearer%20%20opaque-cred-1&x=1',
    '/v1/me?h=%20Bearer%20opaque-cred-1',
    '/v1/me?h=Bearer%09opaque-cred-1',
  ]) {
    const scrubbed = scrubSecrets(`{"url":"${escaped}"}`);
    assert.ok(!scrubbed.includes('opaque-cred-1'), scrubbed);
    assert.doesNotThrow(() => JSON.parse(scrubbed));
  }
  // Glued to what precedes them: a URL-encoded header in a query, a key pasted into a path.
  for (const glued of [`/v1/me?authorization=Bearer%20${key}`, `/v1/tasks/zzz${key}`, `?q=%22${key}%22`])
    assert.ok(!scrubSecrets(glued).includes(key), glued);
  // A secret with some characters percent-escaped in a URL is the same secret to the service: not written.
  for (const escaped of [
    '/admin/v1/accounts/admin%2Dtoken%2D0123456789',
    '?q=%61dmin-token-0123456789',
    `/v1/tasks/${key.replace('_', '%5F').replace('A', '%41')}`,
  ]) {
    const scrubbed = scrubSecrets(`{"url":"${escaped}"}`, ['admin-token-0123456789']);
    assert.ok(!scrubbed.includes('0123456789') && !scrubbed.includes(key.slice(8)), scrubbed);
    assert.doesNotThrow(() => JSON.parse(scrubbed));
  }
  // Other escapes stay as they were, so the line is the same JSON.
  assert.equal(scrubSecrets('{"url":"/x?q=%22a%22%20b%5C"}'), '{"url":"/x?q=%22a%22%20b%5C"}');
});

test("a provider's words quoting a direct link or a callback address are written without their tokens", () => {
  const upload = 'vRqeBG5TyUZeg9gvhMZ0wlvPxrofTkco';
  const callback = 'Zx81aQ0pLmN7bV6cX5zS4dF3gH2jK1lQ';
  const quoted = [
    `could not fetch image_urls[0]: https://api.example.com/files/${upload}/a.png answered 403`,
    `{"callBackUrl":"https://api.example.com/v1/callbacks/suno-main/${callback}","prompt":"x"}`,
    `bad url http://h/FILES/${upload}?x=1 and http://h/v1/callbacks/cog/${callback}`,
  ];
  for (const text of quoted) {
    const out = scrubSecrets(text);
    assert.ok(!out.includes(upload) && !out.includes(callback), out);
  }
  const out = capture();
  const log = createLogger({ level: 'info', destination: out.stream });
  log.error({ err: new Error(quoted[0], { cause: new Error(quoted[1]) }) }, 'run failed');
  assert.doesNotThrow(() => JSON.parse(out.text()));
  assert.ok(!out.text().includes(upload) && !out.text().includes(callback), out.text());
  // What only looks like it stays: an upload's id, a storage path, a shorter or longer word.
  for (const kept of [
    '/v1/files/01a229cb-5283-731f-a3b4-a8ade168f79b',
    '/data/files/uploads/01a229cb-5283-731f-a3b4-a8ade168f79b',
    `/files/${upload}X/a.png`,
    `/files/${upload.slice(1)}/a.png`,
  ])
    assert.equal(scrubSecrets(kept), kept);
});

test('the logger redacts credential fields, serialises causes and never writes configured secrets', () => {
  const out = capture();
  const log = createLogger({
    level: 'info',
    destination: out.stream,
    secrets: ['admin-token-0123456789', 'short', null],
  });
  log.info(
    {
      headers: { authorization: 'Bearer x-y-z', cookie: 'sid=1' },
      req: { method: 'POST', url: '/v1/callbacks/c/tok123?token=q' },
      password: 'pw-1',
      nested: { secret: 's-1', token: 't-1' },
    },
    'admin-token-0123456789 said short',
  );
  log.error({ err: new Error('outer', { cause: new Error('inner cause') }) }, 'broke');
  const [first, second] = out
    .text()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(first.headers.authorization, REDACTED);
  assert.equal(first.headers.cookie, REDACTED);
  assert.equal(first.password, REDACTED);
  assert.deepEqual(first.nested, { secret: REDACTED, token: REDACTED });
  assert.deepEqual(first.req, { method: 'POST', url: `/v1/callbacks/c/${REDACTED}?token=${REDACTED}` });
  assert.equal(first.msg, `${REDACTED} said short`, 'values under 8 characters are not scrubbed');
  assert.equal(second.err.message, 'outer');
  assert.equal(second.err.cause.message, 'inner cause');
});

test("a trace line carrying a request's headers is written without the dashboard's CSRF token", () => {
  const out = capture();
  const log = createLogger({ level: 'trace', destination: out.stream });
  const headers = { cookie: 'gta_session=s-1', 'x-csrf-token': 'csrf-6gBdj6TKwVmxANE5yNFvODvT2giL' };
  // What @fastify/multipart writes at trace level for an upload of the dashboard.
  log.trace({ busboyOptions: { headers, limits: { files: 1 } } }, 'Providing options to busboy');
  log.info({ headers }, 'top level');
  const text = out.text();
  assert.ok(!text.includes('csrf-6gBdj6TKwVmxANE5yNFvODvT2giL'), text);
  const [first, second] = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(first.busboyOptions.headers['x-csrf-token'], REDACTED);
  assert.equal(second.headers['x-csrf-token'], REDACTED);
});

test('secretsOfUrl finds the credentials of DATABASE_URL and STORAGE_URL', () => {
  assert.deepEqual(secretsOfUrl('postgres://gta:p%40ss-word-1@db:5432/gta'), [
    'p@ss-word-1',
    'p%40ss-word-1',
  ]);
  assert.deepEqual(
    secretsOfUrl(
      's3://bucket?endpoint=http://s3:9000&accessKeyId=AK&secretAccessKey=SK-123456&sessionToken=ST-1',
    ),
    ['AK', 'SK-123456', 'ST-1'],
  );
  assert.deepEqual(secretsOfUrl('sqlite:/data/service.db'), []);
  assert.deepEqual(secretsOfUrl('file:///data/files'), []);
});

test("an S3 refusal quoting STORAGE_URL's access key id is logged without it", () => {
  const out = capture();
  const storageUrl =
    's3://bucket?endpoint=http://s3:9000&accessKeyId=AKIAEXAMPLEKEYID0001&secretAccessKey=sk-0123456789';
  const log = createLogger({ level: 'info', destination: out.stream, secrets: secretsOfUrl(storageUrl) });
  const refusal = Object.assign(
    new Error('The AWS Access Key Id you provided does not exist in our records.'),
    {
      name: 'InvalidAccessKeyId',
      AWSAccessKeyId: 'AKIAEXAMPLEKEYID0001',
    },
  );
  log.error({ err: refusal }, 'request failed');
  assert.match(out.text(), /InvalidAccessKeyId/);
  assert.doesNotMatch(out.text(), /AKIAEXAMPLEKEYID0001/);
});
