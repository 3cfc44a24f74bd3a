import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * The service's temporary folders (uploads being received, inputs and artifacts being read, runs' outputs,
 * preset samples being drawn). Each is named `gta-<use>-<pid>-<random>`: a process removes its folders
 * itself, but one that was killed (`kill -9`, a crash, the OOM killer) leaves them behind for good, and
 * the pid in the name lets any later process on the host tell them apart from a live process's.
 */
const TEMP_USES = ['upload', 'run', 'input', 'artifact', 'preset'] as const;
export type TempUse = (typeof TEMP_USES)[number];

/** A new empty temporary folder for `use`, owned by this process. */
export function makeTempFolder(use: TempUse, root: string = os.tmpdir()): Promise<string> {
  return fsp.mkdtemp(path.join(root, `gta-${use}-${process.pid}-`));
}

const OURS = new RegExp(`^gta-(?:${TEMP_USES.join('|')})-(?:(\\d+)-)?`);
/**
 * Age under which a folder is never removed, even of a process that is gone: its pid may be of another
 * pid namespace sharing the folder (containers with one /tmp). Folders named before the pid was in the
 * name wait a day.
 */
const ORPHAN_MIN_AGE_MS = 60 * 60_000;
const UNNAMED_KEPT_MS = 24 * 60 * 60_000;

/** Whether a process with this id runs on this host (as far as this process may know). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temporary folders that processes which no longer run left behind; resolves with how many.
 * A folder of a live process (this one included) is never touched, however old: a worker keeps its empty
 * run folders between runs.
 */
export async function removeOrphanTempFolders(
  root: string = os.tmpdir(),
  now: number = Date.now(),
): Promise<number> {
  let removed = 0;
  for (const name of await fsp.readdir(root)) {
    const match = OURS.exec(name);
    if (!match) continue;
    const dir = path.join(root, name);
    const pid = match[1] === undefined ? null : Number(match[1]);
    if (pid !== null && alive(pid)) continue;
    const stat = await fsp.stat(dir).catch(() => null);
    const minAge = pid === null ? UNNAMED_KEPT_MS : ORPHAN_MIN_AGE_MS;
    if (stat === null || !stat.isDirectory() || now - stat.mtimeMs < minAge) continue;
    await fsp.rm(dir, { recursive: true, force: true });
    removed += 1;
  }
  return removed;
}
