/** Small pieces the libraries pages share: addresses, passing states and state badges. */
import { html, type VNode } from '../html.ts';
import type { LibraryDecl } from '../libraries-port.ts';
import type { Words } from '../words.ts';
import { wordOr } from './library-form.ts';

/** The page's address of a kind: `/libraries/<model>/<segment>`. */
export function kindHref(decl: Pick<LibraryDecl, 'model' | 'segment'>): string {
  return `/libraries/${decl.model}/${decl.segment}`;
}

/**
 * States a record passes through without the person (learning, processing, verifying): the list polls
 * such records until they leave them. Read from the declaration: the learning state and the target of
 * every step the generator ends.
 */
export function passingStates(decl: LibraryDecl): string[] {
  const states = new Set<string>();
  if (decl.learns) states.add(decl.learns.initial);
  for (const step of Object.values(decl.steps ?? {})) if (step.succeeds) states.add(step.to);
  return [...states];
}

/** A state as a readable badge. */
export function stateBadge(w: Words, status: string): VNode {
  return html`<span class=${`badge state-${status}`} data-state=${status}>${wordOr(w, `state:${status}`, status)}</span>`;
}

/** The state words the islands show, as JSON in a data attribute. */
export function stateWords(w: Words): string {
  const states = Object.keys(w).filter((k) => k.startsWith('state:'));
  return JSON.stringify(Object.fromEntries(states.map((k) => [k.slice(6), wordOr(w, k, k)])));
}
