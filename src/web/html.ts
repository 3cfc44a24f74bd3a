/**
 * Server-rendered markup: Preact elements written with htm (tagged templates, no JSX, no build step;
 * `htm/preact` is htm bound to Preact's `h`), rendered to a string. Text and attributes are escaped by
 * the renderer.
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { render } from 'preact-render-to-string';

/** Markup of a whole page. */
export function renderPage(page: VNode): string {
  return `<!doctype html>${render(page)}`;
}

export { html, type VNode };
