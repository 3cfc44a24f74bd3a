/**
 * Runs s3rver (an S3-compatible server from npm) on loopback for the PostgreSQL + S3 test run:
 * `node scripts/s3rver.ts <directory> <port> <bucket>`. Keys S3RVER / S3RVER, region us-east-1.
 */
import { createRequire } from 'node:module';

/** The part of s3rver's API (it ships no types) used here. */
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
  configureBuckets: { name: string }[];
}) => { run(): Promise<unknown>; close(): Promise<void> };

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;
const [directory = '.tmp/s3', port = '4569', bucket = 'gta-test'] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1',
  port: Number(port),
  directory,
  silent: true,
  configureBuckets: [{ name: bucket }],
});
await server.run();
process.stdout.write(`s3rver on 127.0.0.1:${port}, bucket ${bucket}\n`);
const stop = (): void => {
  void server.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
