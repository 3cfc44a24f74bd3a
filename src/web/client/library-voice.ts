/**
 * A singing voice's page: while the voice passes through a state (processing, verifying) its record is
 * read every 2 s; when the state changes the page of the new state is shown (the phrase, the result).
 */
import { api, sessionEnded } from './api.js';

const section = document.querySelector<HTMLElement>('[data-voice][data-poll]');

if (section) {
  const rendered = section.dataset.status ?? '';
  const tick = async () => {
    try {
      const record = await api<{ status?: string }>('GET', section.dataset.voice ?? '');
      if (record.status !== rendered) {
        location.reload();
        return;
      }
    } catch (error) {
      // Signed out meanwhile: the reload goes to the sign-in page, which leads back here.
      if (sessionEnded(error)) return location.reload();
      // Try again at the next tick.
    }
    setTimeout(tick, 2000);
  };
  setTimeout(tick, 2000);
}
