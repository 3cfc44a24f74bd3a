#!/usr/bin/env node
// Entry of `npx gta …` (user commands and `gta admin …`): runs the TypeScript CLI on the project's own Node 24.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const node = path.join(root, 'node_modules', '.bin', 'node');
// Ctrl-C reaches the CLI too (the same process group): its answer, and its exit code, are the ones that count.
process.on('SIGINT', () => {});
const result = spawnSync(node, [path.join(root, 'src', 'cli', 'main.ts'), ...process.argv.slice(2)], {
  stdio: 'inherit',
});
process.exit(result.status ?? (result.signal ? 128 + os.constants.signals[result.signal] : 1));
