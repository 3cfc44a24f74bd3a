/**
 * A player for each file a task made, chosen by its content type: `audio/*` an `<audio controls>`,
 * `video/*` a `<video controls>`, pictures (SVG included) an `<img>` (an SVG is never put inline, so its
 * markup cannot run in the page), a GLB an interactive `<model-viewer camera-controls>`, anything else no
 * preview. Every file also has its Download link (`/v1/tasks/{id}/artifacts/{index}`, which the session
 * cookie opens and which answers `Content-Disposition: attachment`).
 */

import type { Lang } from '../../i18n/index.ts';
import { html, type VNode } from '../html.ts';
import type { WebArtifact as ArtifactView } from '../tasks-port.ts';
import { fill, type Words } from '../words.ts';
import { bytesText } from './uploads.ts';

/** The kinds of player a file can get. */
export type PlayerKind = 'audio' | 'video' | 'image' | 'model' | 'none';

/** The player of a file, by its content type (and `.glb` for 3D models sent as bytes). */
export function playerKind(file: Pick<ArtifactView, 'content_type' | 'filename'>): PlayerKind {
  const type = file.content_type.toLowerCase().split(';')[0]?.trim() ?? '';
  if (type === 'model/gltf-binary' || file.filename.toLowerCase().endsWith('.glb')) return 'model';
  if (type.startsWith('audio/')) return 'audio';
  if (type.startsWith('video/')) return 'video';
  if (type.startsWith('image/')) return 'image';
  return 'none';
}

function preview(file: ArtifactView, w: Words): VNode {
  const src = file.download_path;
  switch (playerKind(file)) {
    case 'audio':
      return html`<audio controls preload="metadata" src=${src} data-player="audio"></audio>`;
    case 'video':
      return html`<video controls preload="metadata" playsinline src=${src} data-player="video"></video>`;
    case 'image':
      return html`<img src=${src} alt=${file.caption || file.filename} loading="lazy" data-player="image" />`;
    case 'model':
      return html`<model-viewer
        src=${src}
        alt=${fill(w.taskModelAlt, { name: file.filename })}
        camera-controls=""
        loading="eager"
        data-player="model"
      ></model-viewer>`;
    case 'none':
      return html`<p class="hint">${w.taskNoPlayer}</p>`;
  }
}

/** One file: its name and size, the player, the Download link; an expired file says so instead. */
export function artifactCard(file: ArtifactView, expired: boolean, w: Words, lang: Lang): VNode {
  return html`<figure class="artifact" data-kind=${playerKind(file)}>
    ${expired ? null : preview(file, w)}
    <figcaption>
      <strong>${file.filename}</strong> <span class="hint">${file.content_type}, ${bytesText(file.size, lang)}</span>
      ${file.caption ? html`<br />${file.caption}` : null}
      ${
        expired
          ? null
          : html` <a class="button secondary" href=${file.download_path} download=${file.filename}>${w.taskDownload}</a>`
      }
    </figcaption>
  </figure>`;
}

/**
 * What `<model-viewer>` (4.x) needs beyond the dashboard's Content-Security-Policy, found in chromium
 * and allowed only on a page that shows a 3D model: `'wasm-unsafe-eval'` for its meshopt decoder
 * (WebAssembly, not `eval`), `blob:` connections for the textures a GLB embeds (three.js's loader reads
 * them from blob URLs), and the hash of the one `<style>` its template puts in its shadow root.
 */
export const MODEL_VIEWER_SOURCES: Readonly<Record<string, readonly string[]>> = {
  'script-src': ["'wasm-unsafe-eval'"],
  'connect-src': ['blob:'],
  'style-src': ["'sha256-PXtZZkJMMyc18o/DN1ZEFOJ2qEGq95IQbVaJFMOXOb0='"],
};

/** A Content-Security-Policy header with the sources `<model-viewer>` needs added to its directives. */
export function withModelViewer(policy: string): string {
  return policy
    .split(';')
    .map((directive) => {
      const [name = '', ...sources] = directive.trim().split(/\s+/);
      const extra = MODEL_VIEWER_SOURCES[name];
      return extra ? [name, ...sources, ...extra].join(' ') : directive;
    })
    .join(';');
}

/** Whether any file of the list needs the 3D viewer's script. */
export function needsModelViewer(files: readonly ArtifactView[]): boolean {
  return files.some((file) => playerKind(file) === 'model');
}
