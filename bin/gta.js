#!/usr/bin/env node
// Entry of `npx gta …` (user commands and `gta admin …`): runs the TypeScript CLI on the project's own Node 24.
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const node = path.join(root, 'node_modules', '.bin', 'node');
const child = spawn(node, [path.join(root, 'src', 'cli', 'main.ts'), ...process.argv.slice(2)], {
  stdio: 'inherit',
});
// A signal sent to this process alone (a supervisor, `timeout -s INT`) is passed on to the CLI, whose answer
// and exit code are the ones that count. A terminal's Ctrl-C reaches both (one process group): the CLI
// then gets it twice, and its first handling ends it.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on('error', (error) => {
  process.stderr.write(`gta: cannot start ${node}: ${error.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  process.exit(code ?? (signal ? 128 + os.constants.signals[signal] : 1));
});
