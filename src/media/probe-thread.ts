/**
 * Entry of a probe thread (see probe-pool.ts): music-metadata's length and frame size of one file.
 * Also callable on the calling thread, which the tests compare against.
 */
import { parseFile } from 'music-metadata';
import type { ProbeResult } from './probe.ts';

export interface ProbeJob {
  path: string;
  /** Whether the sniffed format is a video (mp4, mov): its length is the longest track's. */
  isVideo: boolean;
}

function positive(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * music-metadata with `duration: true`, so MP3/ADTS without headers are counted frame by frame. For
 * video the length is the longest of the container and track durations. Nothing on failure.
 */
export async function probeWithMusicMetadata({ path, isVideo }: ProbeJob): Promise<ProbeResult> {
  try {
    const { format } = await parseFile(path, { duration: true, skipCovers: true });
    const result: ProbeResult = {};
    const trackDurations = format.trackInfo.map((track) => positive(track.duration) ?? 0);
    const duration = isVideo
      ? positive(Math.max(format.duration ?? 0, ...trackDurations))
      : (positive(format.duration) ?? positive(Math.max(0, ...trackDurations)));
    if (duration !== undefined) result.durationSeconds = duration;
    const video = format.trackInfo.find((track) => track.video?.pixelWidth && track.video.pixelHeight)?.video;
    if (isVideo && video?.pixelWidth && video.pixelHeight) {
      result.width = video.pixelWidth;
      result.height = video.pixelHeight;
    }
    return result;
  } catch {
    return {};
  }
}
