/**
 * The top-up form: the amount in rubles becomes kopecks, `POST /v1/topups` creates the top-up, and the
 * browser goes to the payment's confirmation page. A refusal shows its message in the form's alert.
 */
import { ApiFailure, api } from './api.js';
import { giveBack } from './form-feedback.js';

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
  const show = (message: string): void => {
    if (!alert) return;
    alert.textContent = message;
    alert.hidden = false;
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const minor = toMinor(input?.value ?? '');
    if (minor === null || minor < 100 || minor > 100_000_000) {
      show(form.dataset.bad ?? '');
      return;
    }
    if (button) button.disabled = true;
    try {
      const topup = await api<Topup>('POST', '/v1/topups', { amount_minor: minor });
      window.location.assign(topup.confirmation_url ?? `/topups/${topup.id}`);
    } catch (error) {
      show(error instanceof ApiFailure ? error.message : String(error));
      giveBack(button);
    }
  });
}
