/**
 * What the islands' forms tell the person besides their summary box: a field's own problem right under it
 * (the control marked `aria-invalid`, the message named by its `aria-describedby`), and the pressed button
 * back in hand after a refusal.
 */

let serial = 0;

/**
 * Shows `problems` under the field `box` of `control` (at its end, or right after `after`, an element of
 * it: the label of a form without boxes of fields), or clears what was shown there when there are none;
 * answers the problems. The ids are those of a field the page was rendered refused (layout.ts
 * `fieldProblem`), so a refusal of the server is cleared the same way.
 */
export function showProblems(
  box: HTMLElement,
  control: HTMLElement,
  problems: string[],
  after?: Element,
): string[] {
  if (control.id === '') {
    serial += 1;
    control.id = `control-${serial}`;
  }
  const noteId = `${control.id}-problem`;
  let note = box.querySelector<HTMLElement>(':scope > .field-problem');
  const described = (control.getAttribute('aria-describedby') ?? '')
    .split(' ')
    .filter((id) => id !== '' && id !== noteId);
  if (problems.length === 0) {
    note?.remove();
    control.removeAttribute('aria-invalid');
  } else {
    if (!note) {
      note = document.createElement('p');
      note.className = 'error field-problem';
      note.id = noteId;
      if (after) after.after(note);
      else box.append(note);
    }
    note.textContent = problems.join(' ');
    control.setAttribute('aria-invalid', 'true');
    described.push(noteId);
  }
  if (described.length > 0) control.setAttribute('aria-describedby', described.join(' '));
  else control.removeAttribute('aria-describedby');
  return problems;
}

/**
 * The form's button, disabled while its call ran, enabled again after a refusal. Disabling it took the
 * focus from it: the focus goes back, so a keyboard user goes on from where they were.
 */
export function giveBack(button: HTMLButtonElement | null | undefined): void {
  if (!button) return;
  button.disabled = false;
  button.focus();
}
