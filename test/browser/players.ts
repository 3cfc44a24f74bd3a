/**
 * Assertions on the players of a task's page (src/web/pages/players.ts) in a real browser, shared by the
 * tests that reach a finished task's page: the audio loads its metadata and plays, the video loads, the
 * pictures decode, and the 3D viewer draws its model on a canvas.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';

/** How long a player may take to load on a busy machine (an upper bound, not a measurement). */
const LOAD = { timeout: 60_000 };

/** The page's first `<audio>` loads its metadata (a duration above 0) and `play()` resolves. */
export async function expectAudioPlays(page: Page): Promise<void> {
  const audio = page.locator('audio[controls]').first();
  await audio.waitFor();
  await page.waitForFunction(
    () => {
      const element = document.querySelector('audio');
      return element !== null && element.readyState >= 1 && element.duration > 0;
    },
    undefined,
    LOAD,
  );
  // A click gives the page the user's activation browsers ask of sound; muted playback needs none.
  await audio.click();
  const played = await page.evaluate(async () => {
    const element = document.querySelector('audio');
    if (!element) return { ok: false, duration: 0, error: 'no audio' };
    element.muted = true;
    try {
      await element.play();
      element.pause();
      return { ok: true, duration: element.duration, error: '' };
    } catch (error) {
      return { ok: false, duration: element.duration, error: String(error) };
    }
  });
  assert.ok(played.ok, `play() was refused: ${played.error}`);
  assert.ok(played.duration > 0, `duration ${played.duration}`);
}

/** The page's first `<video>` loads: metadata with a frame size, then a frame to show. */
export async function expectVideoLoads(page: Page): Promise<void> {
  await page.locator('video[controls]').first().waitFor();
  await page.waitForFunction(
    () => {
      const element = document.querySelector('video');
      return element !== null && element.readyState >= 2 && element.videoWidth > 0 && element.duration > 0;
    },
    undefined,
    LOAD,
  );
  // A frame from the middle is decoded and shown (the picture of the page is not a loading spinner).
  const shown = await page.evaluate(async () => {
    const element = document.querySelector('video');
    if (!element) return { error: 'no video', ready: 0 };
    const seeked = new Promise((resolve) => element.addEventListener('seeked', resolve, { once: true }));
    element.currentTime = element.duration / 2;
    await seeked;
    return { error: element.error?.message ?? null, ready: element.readyState };
  });
  assert.equal(shown.error, null);
  assert.ok(shown.ready >= 2, `readyState ${shown.ready}`);
}

/** Every `<img>` of the task's results is decoded with a width above 0 (PNG and SVG alike). */
export async function expectImageLoads(page: Page): Promise<void> {
  const images = page.locator('.artifact img');
  await images.first().waitFor();
  await page.waitForFunction(
    () => {
      const all = [...document.querySelectorAll<HTMLImageElement>('.artifact img')];
      return all.length > 0 && all.every((img) => img.complete && img.naturalWidth > 0);
    },
    undefined,
    LOAD,
  );
}

/**
 * The `<model-viewer>` is defined, has a canvas in its shadow root, and reports `loaded` (its model is
 * fetched and parsed) without an error event.
 */
export async function expectModelViewerCanvas(page: Page): Promise<void> {
  await page.locator('model-viewer').first().waitFor(LOAD);
  await page.waitForFunction(() => customElements.get('model-viewer') !== undefined, undefined, LOAD);
  await page.waitForFunction(
    () => {
      const viewer = document.querySelector('model-viewer') as (HTMLElement & { loaded?: boolean }) | null;
      return viewer?.loaded === true && viewer.shadowRoot?.querySelector('canvas') != null;
    },
    undefined,
    LOAD,
  );
}
