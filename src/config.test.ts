import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig, parseDuration, parseRetrySchedule, parseSize } from './config.ts';

test('defaults of CONTRACT §1', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.publicBaseUrl, 'http://127.0.0.1:8080');
  assert.match(config.databaseUrl, /^sqlite:.*data\/service\.db$/);
  assert.match(config.storageUrl, /^file:\/\/.*data\/files$/);
  assert.equal(config.adminToken, null);
  assert.equal(config.metricsToken, null);
  assert.equal(config.simSpeed, 1);
  assert.equal(config.resultRetentionMs, 14 * 86_400_000);
  assert.equal(config.uploadRetentionMs, 7 * 86_400_000);
  assert.equal(config.logLevel, 'info');
  assert.ok(config.renderThreads >= 1 && config.renderThreads <= 4);
  assert.equal(loadConfig({ RENDER_THREADS: '0' }).renderThreads, 0);
  assert.equal(config.downloadTimeoutMs, 30_000);
  assert.equal(config.downloadRequestMaxBytes, 200 * 1024 * 1024);
  assert.equal(config.downloadAccountBytesPerMinute, 500 * 1024 * 1024);
  assert.equal(config.uploadQuotaBytes, 1024 ** 3);
  assert.equal(config.requestTimeoutMs, 600_000);
  assert.equal(config.bodyTimeoutMs, 10_000);
  assert.ok(Object.isFrozen(config));
});

test('bad values stop the start with an error naming the variable', () => {
  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'abc' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ SIM_SPEED: '0' }, /SIM_SPEED/],
    [{ SIM_SPEED: 'fast' }, /SIM_SPEED/],
    // Times scaled by these outgrow a date or Infinity: runs ended at once, library steps answered 500.
    [{ SIM_SPEED: '1e-12' }, /SIM_SPEED/],
    [{ SIM_SPEED: '1e-310' }, /SIM_SPEED/],
    [{ RESULT_RETENTION: '14 days' }, /RESULT_RETENTION/],
    [{ UPLOAD_RETENTION: '-1d' }, /UPLOAD_RETENTION/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ DOWNLOAD_TIMEOUT: '1m' }, /DOWNLOAD_TIMEOUT/],
    [{ DOWNLOAD_REQUEST_MB: '0' }, /DOWNLOAD_REQUEST_MB/],
    [{ DOWNLOAD_ACCOUNT_MB: '5000' }, /DOWNLOAD_ACCOUNT_MB/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ STORAGE_URL: 'ftp://x' }, /STORAGE_URL/],
    [{ PUBLIC_BASE_URL: 'not a url' }, /PUBLIC_BASE_URL/],
    [{ ADMIN_TOKEN: 'short' }, /ADMIN_TOKEN/],
    [{ METRICS_TOKEN: 'short' }, /METRICS_TOKEN/],
    // No `Authorization: Bearer` header can carry these, so the operator API or the scrape would never open.
    [{ ADMIN_TOKEN: 'my admin token 0123456789' }, /ADMIN_TOKEN must be printable ASCII/],
    [{ METRICS_TOKEN: 'métrics-tökén-0123456789' }, /METRICS_TOKEN must be printable ASCII/],
    [{ METRICS_PORT: '0' }, /METRICS_PORT/],
    [{ METRICS_PORT: 'ninety' }, /METRICS_PORT/],
    [{ RENDER_THREADS: '-1' }, /RENDER_THREADS/],
    [{ RENDER_THREADS: 'many' }, /RENDER_THREADS/],
    [{ UPLOAD_QUOTA: '1.5GB' }, /UPLOAD_QUOTA/],
    [{ UPLOAD_QUOTA: '0' }, /UPLOAD_QUOTA/],
    [{ REQUEST_TIMEOUT: '0s' }, /REQUEST_TIMEOUT/],
    [{ BODY_TIMEOUT: 'soon' }, /BODY_TIMEOUT/],
    // Past what a timer holds (about 24.8 days), or past ten years for retentions and sessions.
    [{ JOB_LEASE: '100d' }, /JOB_LEASE/],
    [{ BODY_TIMEOUT: '30d' }, /BODY_TIMEOUT/],
    [{ PAYMENTS: 'test', TOPUP_SWEEP: '30d' }, /TOPUP_SWEEP/],
    [{ RESULT_RETENTION: '99999999999999d' }, /RESULT_RETENTION/],
    [{ SESSION_TTL: '99999999999d' }, /SESSION_TTL/],
    [{ DATABASE_URL: 'sqlite:' }, /DATABASE_URL/],
    [{ DATABASE_URL: 'postgres://garbage::host' }, /DATABASE_URL/],
    [{ STORAGE_URL: 'file://' }, /STORAGE_URL/],
    [{ STORAGE_URL: 'file://relative/dir' }, /STORAGE_URL/],
    [{ HOST: 'garbage host' }, /HOST/],
    [{ METRICS_PORT: '9100' }, /METRICS_PORT needs METRICS_TOKEN/],
    [{ PUBLIC_BASE_URL: 'https://user:pass@example.com' }, /PUBLIC_BASE_URL/],
    [{ PUBLIC_BASE_URL: 'https://example.com/base?x=1' }, /PUBLIC_BASE_URL/],
    [{ PUBLIC_BASE_URL: 'https://example.com/gta' }, /PUBLIC_BASE_URL must be an origin without a path/],
    [{ PORT: '0x50' }, /PORT must be an integer/],
    [{ PORT: '8e3' }, /PORT must be an integer/],
    [{ PUBLIC_BASE_URL: 'https://example.com/gta/' }, /PUBLIC_BASE_URL/],
    [{ SMTP_URL: 'smtp://' }, /SMTP_URL/],
    [{ WEBHOOK_RETRY_SCHEDULE: '50ms' }, /WEBHOOK_RETRY_SCHEDULE/],
    [{ TRUST_PROXY: 'true' }, /TRUST_PROXY/],
    [{ TRUST_PROXY: 'proxy.local' }, /TRUST_PROXY/],
    [{ TRUST_PROXY: '10.0.0.0/99' }, /TRUST_PROXY/],
    [{ FETCH_ALLOW_ADDRESSES: 'localhost' }, /FETCH_ALLOW_ADDRESSES/],
    [{ FETCH_ALLOW_ADDRESSES: '127.0.0.1:18001' }, /FETCH_ALLOW_ADDRESSES/],
    [{ FETCH_ALLOW_ADDRESSES: '127.0.0.0/8' }, /FETCH_ALLOW_ADDRESSES/],
    [{ RATE_LIMIT_ACCOUNT: '120' }, /RATE_LIMIT_ACCOUNT/],
    [{ RATE_LIMIT_ACCOUNT: '0/1m' }, /RATE_LIMIT_ACCOUNT/],
    [{ RATE_LIMIT_WRONG_KEY: '30/soon' }, /RATE_LIMIT_WRONG_KEY/],
    [{ RATE_LIMIT_HELPERS: '20/2d' }, /RATE_LIMIT_HELPERS/],
  ];
  for (const [env, name] of bad)
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && name.test(e.message),
    );
});

test('SIM_SPEED takes any number from 0.001 (a thousand times slower) up', () => {
  assert.equal(loadConfig({ SIM_SPEED: '0.001' }).simSpeed, 0.001);
  assert.equal(loadConfig({ SIM_SPEED: '1e9' }).simSpeed, 1e9);
  assert.throws(() => loadConfig({ SIM_SPEED: '0.0009' }), /SIM_SPEED must be a number of at least 0.001/);
});

test('RATE_LIMIT_* are COUNT/DURATION, with the reference’s limits by default', () => {
  assert.deepEqual(loadConfig({}).rateLimits, {
    account: { count: 120, windowMs: 60_000 },
    wrongKey: { count: 30, windowMs: 60_000 },
    helpers: { count: 20, windowMs: 3_600_000 },
  });
  const set = loadConfig({
    RATE_LIMIT_ACCOUNT: '1000/10s',
    RATE_LIMIT_WRONG_KEY: ' 5/1h ',
    RATE_LIMIT_HELPERS: '100/1d',
  });
  assert.deepEqual(set.rateLimits, {
    account: { count: 1_000, windowMs: 10_000 },
    wrongKey: { count: 5, windowMs: 3_600_000 },
    helpers: { count: 100, windowMs: 86_400_000 },
  });
});

test('TRUST_PROXY names the proxies whose X-Forwarded-For is believed; none by default', () => {
  assert.deepEqual(loadConfig({}).trustProxy, []);
  assert.deepEqual(loadConfig({ TRUST_PROXY: ' 127.0.0.1, 10.0.0.0/8,::1,fd00::/8, loopback ' }).trustProxy, [
    '127.0.0.1',
    '10.0.0.0/8',
    '::1',
    'fd00::/8',
    'loopback',
  ]);
});

test('FETCH_ALLOW_ADDRESSES lists exact IP addresses; none by default', () => {
  assert.deepEqual(loadConfig({}).fetchAllowAddresses, []);
  assert.deepEqual(loadConfig({ FETCH_ALLOW_ADDRESSES: ' 127.0.0.1, ::1 ' }).fetchAllowAddresses, [
    '127.0.0.1',
    '::1',
  ]);
});

test('parseDuration reads 30s, 10m, 2h, 7d', () => {
  assert.equal(parseDuration('30s'), 30_000);
  assert.equal(parseDuration('10m'), 600_000);
  assert.equal(parseDuration('2h'), 7_200_000);
  assert.equal(parseDuration('7d'), 604_800_000);
  for (const bad of ['', '5', '1w', '0s', '1.5h']) assert.equal(parseDuration(bad), null, bad);
});

test('parseSize reads 64KB, 500MB, 1GB and plain bytes (binary units)', () => {
  assert.equal(parseSize('64KB'), 65_536);
  assert.equal(parseSize('500mb'), 500 * 1024 ** 2);
  assert.equal(parseSize('1GB'), 1024 ** 3);
  assert.equal(parseSize('12345'), 12_345);
  for (const bad of ['', '0', '1.5GB', '-1MB', '5PB', '99999999TB']) assert.equal(parseSize(bad), null, bad);
});

test('WEBHOOK_RETRY_SCHEDULE: CONTRACT §12 default, waits in ms to days, bad values refused', () => {
  const hour = 3_600_000;
  assert.deepEqual(loadConfig({}).webhookRetryScheduleMs, [
    5_000,
    300_000,
    1_800_000,
    2 * hour,
    5 * hour,
    10 * hour,
    10 * hour,
  ]);
  assert.equal(loadConfig({}).webhookConcurrency, 16);
  assert.deepEqual(
    loadConfig({ WEBHOOK_RETRY_SCHEDULE: '100ms, 2s,1m' }).webhookRetryScheduleMs,
    [100, 2_000, 60_000],
  );
  assert.deepEqual(parseRetrySchedule('7d'), [7 * 24 * hour]);
  for (const bad of ['', ',', '5s,', '0ms', '50ms', '8d', '1.5s', 'soon', Array(21).fill('1s').join(',')])
    assert.equal(parseRetrySchedule(bad), null, bad);
  for (const env of [{ WEBHOOK_RETRY_SCHEDULE: '5s,x' }, { WEBHOOK_CONCURRENCY: '0' }])
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && /WEBHOOK_/.test(e.message),
    );
});

test('stream and waiting limits: STREAMS_PER_ACCOUNT and STREAM_HEARTBEAT (CONTRACT §12)', () => {
  const config = loadConfig({});
  assert.equal(config.streamsPerAccount, 20);
  assert.equal(config.streamHeartbeatMs, 15_000);
  const set = loadConfig({ STREAMS_PER_ACCOUNT: '3', STREAM_HEARTBEAT: '1s' });
  assert.equal(set.streamsPerAccount, 3);
  assert.equal(set.streamHeartbeatMs, 1_000);
  for (const [env, name] of [
    [{ STREAMS_PER_ACCOUNT: '0' }, /STREAMS_PER_ACCOUNT/],
    [{ STREAMS_PER_ACCOUNT: 'many' }, /STREAMS_PER_ACCOUNT/],
    [{ STREAM_HEARTBEAT: '2m' }, /STREAM_HEARTBEAT/],
    [{ STREAM_HEARTBEAT: 'often' }, /STREAM_HEARTBEAT/],
  ] as const)
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && name.test(e.message),
    );
});

test('METRICS_TOKEN turns GET /metrics on (CONTRACT §15)', () => {
  assert.equal(
    loadConfig({ METRICS_TOKEN: '  metrics-token-0123456789 ' }).metricsToken,
    'metrics-token-0123456789',
  );
  assert.equal(loadConfig({ METRICS_TOKEN: '' }).metricsToken, null);
  assert.equal(loadConfig({}).metricsPort, null);
  assert.equal(
    loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: 'metrics-token-0123456789' }).metricsPort,
    9464,
  );
});

test('mail, sign-up credit and sessions: SMTP_URL, MAIL_FROM, SIGNUP_CREDIT_MINOR, SESSION_TTL (CONTRACT §13)', () => {
  const config = loadConfig({});
  assert.equal(config.smtpUrl, null);
  assert.equal(config.mailFrom, 'no-reply@127.0.0.1');
  assert.equal(config.signupCreditMinor, 0);
  assert.equal(config.sessionTtlMs, 30 * 86_400_000);
  const set = loadConfig({
    SMTP_URL: 'smtps://u:p@mail.example:465',
    MAIL_FROM: 'Studio <hello@studio.example>',
    SIGNUP_CREDIT_MINOR: '5000',
    SESSION_TTL: '2h',
  });
  assert.equal(set.smtpUrl, 'smtps://u:p@mail.example:465');
  assert.equal(set.mailFrom, 'Studio <hello@studio.example>');
  assert.equal(set.signupCreditMinor, 5000);
  assert.equal(set.sessionTtlMs, 7_200_000);
  for (const [env, name] of [
    [{ SMTP_URL: 'http://mail.example' }, /SMTP_URL/],
    [{ MAIL_FROM: 'nobody' }, /MAIL_FROM/],
    [{ SIGNUP_CREDIT_MINOR: '-1' }, /SIGNUP_CREDIT_MINOR/],
    [{ SESSION_TTL: 'forever' }, /SESSION_TTL/],
  ] as const) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && name.test(e.message),
    );
  }
});

test('wallet top-ups: PAYMENTS, YOOKASSA_*, TOPUP_SWEEP (CONTRACT §14)', () => {
  const config = loadConfig({});
  assert.deepEqual(config.payments, { mode: 'off', yookassa: null, sweepIntervalMs: 30_000 });
  assert.equal(loadConfig({ PAYMENTS: 'test', TOPUP_SWEEP: '5s' }).payments.sweepIntervalMs, 5_000);
  assert.equal(loadConfig({ PAYMENTS: 'test' }).payments.mode, 'test');
  const real = loadConfig({ PAYMENTS: 'yookassa', YOOKASSA_SHOP_ID: '123', YOOKASSA_SECRET_KEY: 'live_x' });
  assert.deepEqual(real.payments.yookassa, {
    shopId: '123',
    secretKey: 'live_x',
    baseUrl: 'https://api.yookassa.ru/v3',
    checkSenderIp: false,
  });
  for (const [value, checkSenderIp] of [
    ['on', true],
    [' off ', false],
    ['', false],
  ] as const) {
    const env = { PAYMENTS: 'yookassa', YOOKASSA_SHOP_ID: '1', YOOKASSA_SECRET_KEY: 's' };
    const set = loadConfig({ ...env, YOOKASSA_CHECK_IP: value });
    assert.equal(set.payments.yookassa?.checkSenderIp, checkSenderIp, value);
  }
  const local = loadConfig({
    PAYMENTS: 'yookassa',
    YOOKASSA_SHOP_ID: '1',
    YOOKASSA_SECRET_KEY: 's',
    YOOKASSA_BASE_URL: 'http://127.0.0.1:9999/v3/',
  });
  assert.equal(local.payments.yookassa?.baseUrl, 'http://127.0.0.1:9999/v3');
  for (const [env, name] of [
    [{ PAYMENTS: 'paypal' }, /PAYMENTS/],
    [{ PAYMENTS: 'yookassa' }, /YOOKASSA_SHOP_ID/],
    [
      { PAYMENTS: 'yookassa', YOOKASSA_SHOP_ID: '1', YOOKASSA_SECRET_KEY: 's', YOOKASSA_BASE_URL: 'ftp://x' },
      /YOOKASSA_BASE_URL/,
    ],
    [{ TOPUP_SWEEP: 'often' }, /TOPUP_SWEEP/],
    [
      { PAYMENTS: 'yookassa', YOOKASSA_SHOP_ID: '1', YOOKASSA_SECRET_KEY: 's', YOOKASSA_CHECK_IP: 'true' },
      /YOOKASSA_CHECK_IP must be on or off, got "true"/,
    ],
    // A typo fails at start even while YooKassa is not switched on.
    [{ YOOKASSA_CHECK_IP: 'yes' }, /YOOKASSA_CHECK_IP/],
  ] as const) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && name.test(e.message),
    );
  }
});
