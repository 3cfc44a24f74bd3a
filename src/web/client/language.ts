/**
 * The `Language` control applies on change; without scripts its Apply button does the same.
 */
for (const form of document.querySelectorAll<HTMLFormElement>('form[data-autosubmit]')) {
  const select = form.querySelector<HTMLSelectElement>('select');
  const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
  if (!select) continue;
  if (button) button.hidden = true;
  select.addEventListener('change', () => form.requestSubmit());
}
