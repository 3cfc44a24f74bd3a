/**
 * The top-up form: the amount in rubles becomes kopecks, `POST /v1/topups` creates the top-up, and the
 * browser goes to the payment's confirmation page. An amount out of range is said in the form's alert and
 * under the field, which is marked `aria-invalid` and takes the focus; a refusal of the API shows its
 * message in the alert.
 */
import { ApiFailure, api } from './api.js';
import { giveBack, showProblems } from './form-feedback.js';

interface Topup {
  id: string;
  confirmation_url: string | null;
}

function toMinor(text: string): number | null {
  const match = /^(\d{1,9})(?:[.,](\d{1,2}))?$/.exec(text.trim().replace(/\s/g, ''));
  if (!match) return null;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

for (const form of document.querySelectorAll<HTMLFormElement>('form[data-topup-form]')) {
  const alert = form.querySelector<HTMLElement>('[data-topup-error]');
  const input = form.querySelector<HTMLInputElement>('input[name="amount"]');
  const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
  const show = (message: string | null): void => {
    if (!alert) return;
    alert.textContent = message ?? '';
    alert.hidden = message === null;
  };
  /** The amount's own problem under it (none: cleared, the server's mark of a post without scripts too). */
  const mark = (problems: string[]): void => {
    const label = input?.closest('label');
    if (input && label) showProblems(form, input, problems, label);
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const minor = toMinor(input?.value ?? '');
    show(null);
    if (minor === null || minor < 100 || minor > 100_000_000) {
      show(form.dataset.bad ?? '');
      mark([form.dataset.bad ?? '']);
      input?.focus();
      return;
    }
    mark([]);
    if (button) button.disabled = true;
    try {
      // The form's key with the amount, as the page builds it without scripts (pages/topup.ts): sent twice
      // (an answer lost on the way), the form still makes one top-up.
      const formKey = form.querySelector<HTMLInputElement>('input[name="form_key"]')?.value ?? '';
      const headers: Record<string, string> = formKey
        ? { 'idempotency-key': `topup-form-${formKey}-${minor}` }
        : {};
      const topup = await api<Topup>('POST', '/v1/topups', { amount_minor: minor }, undefined, headers);
      window.location.assign(topup.confirmation_url ?? `/topups/${topup.id}`);
    } catch (error) {
      show(error instanceof ApiFailure ? error.message : String(error));
      giveBack(button);
    }
  });
}
