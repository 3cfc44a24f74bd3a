import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseS3Url } from './s3-url.ts';

test('parseS3Url reads bucket, prefix, endpoint, region, path style and credentials', () => {
  const location = parseS3Url(
    's3://my-bucket/files/prod/?endpoint=http://127.0.0.1:4569/&region=eu-west-1&forcePathStyle=false' +
      '&accessKeyId=AK&secretAccessKey=SK%2Fx',
  );
  assert.deepEqual(location, {
    bucket: 'my-bucket',
    prefix: 'files/prod',
    endpoint: 'http://127.0.0.1:4569',
    region: 'eu-west-1',
    forcePathStyle: false,
    credentials: { accessKeyId: 'AK', secretAccessKey: 'SK/x' },
  });
});

test('parseS3Url: a bare bucket leaves region, credentials and virtual-host style to the SDK', () => {
  assert.deepEqual(parseS3Url('s3://my.bucket-1'), {
    bucket: 'my.bucket-1',
    prefix: '',
    forcePathStyle: false,
  });
});

test('parseS3Url: an endpoint implies path style and us-east-1', () => {
  const location = parseS3Url('s3://bucket?endpoint=https://s3.example.test');
  assert.equal(location.forcePathStyle, true);
  assert.equal(location.region, 'us-east-1');
  assert.equal(location.endpoint, 'https://s3.example.test');
  assert.equal(location.credentials, undefined);
  assert.equal(parseS3Url('s3://bucket?endpoint=http://h:1&forcePathStyle=0').forcePathStyle, false);
});

test('parseS3Url keeps a session token with static credentials', () => {
  const location = parseS3Url('s3://bucket?accessKeyId=a&secretAccessKey=b&sessionToken=t');
  assert.deepEqual(location.credentials, { accessKeyId: 'a', secretAccessKey: 'b', sessionToken: 't' });
});

test('parseS3Url refuses bad URLs with an error naming STORAGE_URL', () => {
  const bad = [
    'not a url',
    'file:///tmp/x',
    's3://',
    's3:///prefix',
    's3://Upper-Case',
    's3://ab',
    's3://bucket..name',
    's3://bucket:9000',
    's3://user:secret@bucket',
    's3://bucket#frag',
    's3://bucket?endpoint=ftp://host',
    's3://bucket?endpoint=nope',
    's3://bucket?endpoint=http://a:b@host',
    's3://bucket?forcePathStyle=maybe',
    's3://bucket?region=EU%20West',
    's3://bucket?accessKeyId=only',
    's3://bucket?secretAccessKey=only',
    's3://bucket?sessionToken=t',
    's3://bucket?regoin=us-east-1',
    's3://bucket?region=a&region=b',
    's3://bucket/%E0%A4%A',
  ];
  for (const url of bad) {
    assert.throws(() => parseS3Url(url), /^Error: STORAGE_URL/, url);
  }
});

test('parseS3Url: dot segments in the prefix are resolved by the URL parser', () => {
  assert.equal(parseS3Url('s3://bucket/a/%2E%2E/b/./c').prefix, 'b/c');
});

test('parseS3Url errors never repeat the secret key', () => {
  try {
    parseS3Url('s3://bucket?accessKeyId=a&secretAccessKey=TOPSECRET&bogus=1');
    assert.fail('should throw');
  } catch (error) {
    assert.ok(error instanceof Error);
    assert.doesNotMatch(error.message, /TOPSECRET/);
  }
});
