/**
 * Records the microphone in the browser as a WAV file (16-bit PCM, mono): `getUserMedia` audio through
 * the Web Audio graph, samples gathered until `stop()`. WAV, not MediaRecorder's WebM, because the API
 * takes mp3, wav, ogg, m4a, flac and aac recordings and browsers record WebM.
 */

/** Whether this browser can record here (a secure page with a microphone API). */
export function canRecord(): boolean {
  return typeof navigator.mediaDevices?.getUserMedia === 'function' && typeof AudioContext === 'function';
}

function wavOf(chunks: Float32Array[], sampleRate: number): Blob {
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const buffer = new ArrayBuffer(44 + length * 2);
  const view = new DataView(buffer);
  const text = (offset: number, s: string) => {
    for (let i = 0; i < s.length; i += 1) view.setUint8(offset + i, s.charCodeAt(i));
  };
  text(0, 'RIFF');
  view.setUint32(4, 36 + length * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, 'data');
  view.setUint32(40, length * 2, true);
  let offset = 44;
  for (const chunk of chunks) {
    for (const sample of chunk) {
      const s = Math.max(-1, Math.min(1, sample));
      view.setInt16(offset, s < 0 ? s * 0x8000 : s * 0x7fff, true);
      offset += 2;
    }
  }
  return new Blob([buffer], { type: 'audio/wav' });
}

/** One recording: `start()` asks for the microphone, `stop()` gives the WAV file. */
export class WavRecorder {
  #stream: MediaStream | null = null;
  #context: AudioContext | null = null;
  #node: ScriptProcessorNode | null = null;
  #chunks: Float32Array[] = [];

  async start(): Promise<void> {
    this.#stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    this.#context = new AudioContext();
    const source = this.#context.createMediaStreamSource(this.#stream);
    // ScriptProcessorNode needs no worklet file (the CSP allows scripts from this site only).
    this.#node = this.#context.createScriptProcessor(4096, 1, 1);
    this.#chunks = [];
    this.#node.onaudioprocess = (event) => {
      this.#chunks.push(new Float32Array(event.inputBuffer.getChannelData(0)));
    };
    source.connect(this.#node);
    this.#node.connect(this.#context.destination);
  }

  /** Seconds recorded so far. */
  get seconds(): number {
    const rate = this.#context?.sampleRate ?? 1;
    return this.#chunks.reduce((n, c) => n + c.length, 0) / rate;
  }

  async stop(): Promise<Blob> {
    const rate = this.#context?.sampleRate ?? 48_000;
    this.#node?.disconnect();
    for (const track of this.#stream?.getTracks() ?? []) track.stop();
    await this.#context?.close();
    this.#node = null;
    this.#stream = null;
    this.#context = null;
    return wavOf(this.#chunks, rate);
  }
}
