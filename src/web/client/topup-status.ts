/**
 * The page a payer returns to: while the top-up is pending, it is read again every two seconds
 * (`GET /v1/topups/{id}` reads the payment back from the provider) and the page reloads once it is final.
 * The page says it refreshes by itself only when this script runs.
 */
import { api, sessionEnded } from './api.js';

const waiting = document.querySelector<HTMLElement>('[data-topup-poll]');
const id = waiting?.dataset.topupPoll;
if (waiting && id) {
  waiting.append(` ${waiting.dataset.refreshes ?? ''}`);
  let tries = 0;
  const check = async (): Promise<void> => {
    tries += 1;
    try {
      const topup = await api<{ status: string }>('GET', `/v1/topups/${encodeURIComponent(id)}`);
      if (topup.status !== 'pending') {
        window.location.reload();
        return;
      }
    } catch (error) {
      // Signed out meanwhile: the reload goes to the sign-in page, which leads back here.
      if (sessionEnded(error)) return window.location.reload();
      // A failed read is tried again on the next turn.
    }
    // Ten minutes at most; a reload starts again.
    if (tries < 300) setTimeout(() => void check(), 2000);
  };
  setTimeout(() => void check(), 1000);
}
