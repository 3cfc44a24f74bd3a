/**
 * Copy buttons: `<button data-copy="<id of an input>">` copies that input's value to the clipboard and
 * says so on the button for a moment.
 */
for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-copy]')) {
  const target = document.getElementById(button.dataset.copy ?? '');
  if (!(target instanceof HTMLInputElement)) continue;
  button.hidden = false;
  const label = button.textContent ?? '';
  button.addEventListener('click', async () => {
    target.select();
    try {
      await navigator.clipboard.writeText(target.value);
    } catch {
      // Without clipboard permission the selected text can still be copied by hand.
      return;
    }
    button.textContent = button.dataset.copied ?? label;
    setTimeout(() => {
      button.textContent = label;
    }, 2000);
  });
}
