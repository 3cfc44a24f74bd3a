/**
 * The `Language` control applies when an option is picked with the pointer; without scripts its Apply
 * button does the same. From the keyboard, the arrows only choose (on a closed select they change its
 * value, and a page that changed under them would take the person's focus away: WCAG 3.2.2): the Apply
 * button shows, and Enter or the button applies.
 */
for (const form of document.querySelectorAll<HTMLFormElement>('form[data-autosubmit]')) {
  const select = form.querySelector<HTMLSelectElement>('select');
  const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
  if (!select) continue;
  if (button) button.hidden = true;
  let byKeyboard = false;
  select.addEventListener('pointerdown', () => {
    byKeyboard = false;
  });
  select.addEventListener('keydown', (event) => {
    byKeyboard = true;
    if (event.key === 'Enter') {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  select.addEventListener('change', () => {
    if (!byKeyboard) form.requestSubmit();
    else if (button) button.hidden = false;
  });
}
