/**
 * The dashboard's scripts and styles. Islands are TypeScript files in `client/` with erasable syntax only,
 * turned into JavaScript once at start by Node's `stripTypeScriptTypes` (no bundler, nothing built is
 * committed) and kept in memory with a content hash: pages link `/assets/<name>.js?v=<hash>`, answered
 * with a year of caching and an ETag. Vendor files are served from node_modules by an exact list of
 * paths (no directory is ever listed or walked).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file ready to send. */
export interface Asset {
  body: Buffer;
  type: string;
  /** Short content hash: the `?v=` of links and the ETag. */
  hash: string;
}

const CLIENT_DIR = fileURLToPath(new URL('./client/', import.meta.url));
const STYLE_FILE = fileURLToPath(new URL('./site.css', import.meta.url));
/** The tab's icon: linked by every page, so a browser never asks for /favicon.ico. */
const ICON_FILE = fileURLToPath(new URL('./favicon.svg', import.meta.url));
const MODULES = fileURLToPath(new URL('../../node_modules/', import.meta.url));

/** Vendor files by the name served under `/assets/vendor/`, from their package's published build. */
const VENDOR: Readonly<Record<string, string>> = {
  'chart.js': 'chart.js/dist/chart.umd.min.js',
  'model-viewer.js': '@google/model-viewer/dist/model-viewer.min.js',
  'preact.js': 'preact/dist/preact.mjs',
  'htm.js': 'htm/dist/htm.mjs',
};

/** Vendor files that are ES modules: pages load them with `type="module"`. */
export const VENDOR_MODULES: ReadonlySet<string> = new Set(['model-viewer.js']);

const JS = 'text/javascript; charset=utf-8';

function hashOf(body: Buffer): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 16);
}

function asset(body: Buffer, type: string): Asset {
  return { body, type, hash: hashOf(body) };
}

/** Everything under `/assets/`, prepared once. */
export class Assets {
  readonly #own = new Map<string, Asset>();
  readonly #vendor = new Map<string, Asset>();

  /** Strips every island and reads the stylesheet now, so a broken island fails the start, not a page. */
  constructor() {
    for (const file of fs.readdirSync(CLIENT_DIR)) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
      const source = fs.readFileSync(path.join(CLIENT_DIR, file), 'utf8');
      const code = stripTypeScriptTypes(source, { mode: 'strip' });
      this.#own.set(`${file.slice(0, -3)}.js`, asset(Buffer.from(code), JS));
    }
    this.#own.set('site.css', asset(fs.readFileSync(STYLE_FILE), 'text/css; charset=utf-8'));
    this.#own.set('favicon.svg', asset(fs.readFileSync(ICON_FILE), 'image/svg+xml'));
  }

  /** An island or the stylesheet by its served name (`copy.js`, `site.css`). */
  own(name: string): Asset | undefined {
    return this.#own.get(name);
  }

  /** A vendor file by its served name; read from node_modules on first use. */
  vendor(name: string): Asset | undefined {
    if (!Object.hasOwn(VENDOR, name)) return undefined;
    let found = this.#vendor.get(name);
    if (!found) {
      found = asset(fs.readFileSync(path.join(MODULES, VENDOR[name] as string)), JS);
      this.#vendor.set(name, found);
    }
    return found;
  }

  /** The link of an own asset, with its content hash. */
  href(name: string): string {
    const found = this.#own.get(name);
    if (!found) throw new Error(`no asset ${name}`);
    return `/assets/${name}?v=${found.hash}`;
  }

  /** The link of a vendor file, with its content hash. */
  vendorHref(name: string): string {
    const found = this.vendor(name);
    if (!found) throw new Error(`no vendor asset ${name}`);
    return `/assets/vendor/${name}?v=${found.hash}`;
  }
}
