/**
 * Runs s3rver (an S3-compatible server from npm) on loopback for the PostgreSQL + S3 test run:
 * `node scripts/s3rver.ts <directory> <port> <bucket>`; prints the STORAGE_URL. Keys S3RVER / S3RVER.
 */
import fs from 'node:fs';
import { startS3rver } from '../test/s3rver.ts';

const [directory = '.tmp/s3', port = '4569', bucket = 'gta-test'] = process.argv.slice(2);
fs.mkdirSync(directory, { recursive: true });
const server = await startS3rver({ bucket, port: Number(port), directory });
process.stdout.write(`STORAGE_URL=${server.url}\n`);
const stop = (): void => {
  void server.stop().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
