/**
 * The sleep of a claim loop (the task worker, the webhook sender): it lasts until its time runs out or
 * somebody rings. A ring that comes while the loop is busy (claiming) is kept, so the next sleep ends at once
 * instead of waiting out its time with work already announced.
 */
export class Alarm {
  #rung = false;
  #wake: (() => void) | null = null;

  /** Ends the current sleep, or the next one if none is under way. */
  ring(): void {
    this.#rung = true;
    this.#wake?.();
  }

  /** Sleeps up to `ms`; resolves at once when rung since the last sleep ended. */
  async sleep(ms: number): Promise<void> {
    if (!this.#rung) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
    this.#rung = false;
  }
}
