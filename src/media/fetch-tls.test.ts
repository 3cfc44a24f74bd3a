/**
 * HTTPS through the address pin: the socket goes to the checked address (127.0.0.1) while SNI and
 * certificate verification use the URL's name. A throwaway self-signed certificate for
 * `media.example` is trusted for this test process only (node --test runs each file in its own process).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import tls from 'node:tls';
import { FetchError, fetchToFile, type LookupFn } from './fetch.ts';

let dir = '';
let port = 0;
let server: https.Server;
const serverNames: string[] = [];
const lookup: LookupFn = async () => [{ address: '127.0.0.1', family: 4 }];

function openssl(args: string[]): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile('openssl', args, { timeout: 10_000 }, (error) => (error ? reject(error) : resolve())),
  );
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'media-tls-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  await openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=media.example',
    '-addext',
    'subjectAltName=DNS:media.example',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  const pem = await readFile(cert, 'utf8');
  tls.setDefaultCACertificates([pem]);
  server = https.createServer({ key: await readFile(key), cert: pem }, (req, res) =>
    res.end(`tls ${req.headers.host}`),
  );
  server.on('tlsClientError', () => {});
  server.prependListener('secureConnection', (socket: tls.TLSSocket) => {
    serverNames.push(String((socket as tls.TLSSocket & { servername?: string | false }).servername));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('fetchToFile over https', () => {
  it('connects to the checked address, sends the name as SNI and verifies the certificate against it', async () => {
    const file = await fetchToFile(`https://media.example:${port}/x`, {
      dir,
      maxBytes: 1000,
      lookup,
      allowAddresses: ['127.0.0.1'],
    });
    assert.equal(await readFile(file.path, 'utf8'), `tls media.example:${port}`);
    assert.deepEqual(serverNames, ['media.example']);
  });

  it('refuses a certificate that does not name the host', async () => {
    const error = await fetchToFile(`https://other.example:${port}/x`, {
      dir,
      maxBytes: 1000,
      lookup,
      allowAddresses: ['127.0.0.1'],
    }).catch((e: unknown) => e);
    assert.ok(error instanceof FetchError);
    assert.equal(error.reason, 'unreachable');
  });
});
