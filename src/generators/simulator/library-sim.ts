/**
 * The built-in LibraryGenerator (CONTRACT §10): saves records after a short pause scaled by SIM_SPEED,
 * lets records that learn (music styles, singing voices) and recording checks take the typical time the
 * request names (divided by SIM_SPEED), issues varied phrases to sing and writes real helper texts built
 * from the caller's words.
 * Markers in any field: `[sim:unavailable]` → GeneratorUnavailable (503, nothing created);
 * `[sim:fail]` → LibraryRejected (502) for records saved while the request waits, a `failed` record for
 * those that learn afterwards; in a verify `name` it fails the singing-voice check (CONTRACT §7).
 */

import { firstChars } from '../../catalog/index.ts';
import { GeneratorUnavailable } from '../generator.ts';
import {
  type HelperIO,
  type HelperName,
  type LibraryCreated,
  type LibraryCreateRequest,
  type LibraryGenerator,
  LibraryRejected,
  type LibrarySettlement,
  type PhraseRequest,
  type RecordingCheck,
} from '../library.ts';
import { createRng, type Rng } from './media/seed.ts';
import { hasMarker, SIM_MARKERS } from './simulator.ts';

/**
 * Typical times at SIM_SPEED 1 (milliseconds) of what no library declares. Reference: saving "usually
 * under a minute". Learning and checking take the time the request names.
 */
export const SIM_LIBRARY_TIMES = {
  save: 20_000,
  helper: 3_000,
} as const;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const PHRASE_WORDS = {
  en: {
    subjects: ['The morning light', 'A silver river', 'My old guitar', 'The summer rain', 'A paper boat'],
    verbs: ['carries', 'remembers', 'is calling', 'dances with', 'waits for', 'follows'],
    objects: ['my quiet song', 'the open sky', 'a golden dawn', 'the falling stars', 'every heartbeat'],
  },
  ru: {
    subjects: ['Утренний свет', 'Серебряная река', 'Старая гитара', 'Летний дождь', 'Бумажный кораблик'],
    verbs: ['несёт', 'помнит', 'зовёт', 'встречает', 'ждёт', 'провожает'],
    objects: ['мою тихую песню', 'открытое небо', 'золотой рассвет', 'падающие звёзды', 'каждый вздох'],
  },
} as const;

const STOPWORDS = new Set(
  (
    'the and for with about song songs that this from into over under your you are was were have has its our ' +
    'their not very some like just make made lost old new big small little good bad more most much many ' +
    'what when where which who how want wants need needs feel feels ' +
    'песня песню песни песне про для очень который которая которое которые когда где этот эта это эти ' +
    'чтобы тоже хочу хочет нужно'
  ).split(' '),
);

/** Content words of a text, in order, without repeats (fallback when there are none). */
export function keywords(text: string, fallback: readonly string[] = ['night', 'road', 'heart']): string[] {
  const words = (text.toLowerCase().match(/[\p{L}][\p{L}'-]*/gu) ?? []).filter(
    (w) => w.length >= 4 && !STOPWORDS.has(w) && !w.startsWith('sim'),
  );
  const unique = [...new Set(words)];
  return unique.length > 0 ? unique : [...fallback];
}

const capital = (w: string): string => w.charAt(0).toUpperCase() + w.slice(1);

const TITLES = ['{A}', '{A} Tonight', 'Song of the {A}', '{A} and {B}', 'Under the {A}', 'Last {A}'];
const VERSE = [
  'I found the {w} where the river bends',
  'Every {w} tells me I should stay',
  'We were young beneath the {w}',
  'Hold the {w} close and never let it go',
  'Light a fire for the {w} tonight',
  'Somewhere past the {w} I hear you call',
  'Counting every {w} along the way',
  'The {w} is singing in my veins',
  'Running through the {w} with nothing left to lose',
  'Written in the {w}, written in the stars',
];
const CHORUS = [
  'Oh, {T}, carry me home',
  '{A} and {B}, we are not alone',
  'Sing it louder, let the {A} shine',
  'Till the {B} is yours and mine',
  'Never let the {A} fade away',
  'We will dance until the break of day',
];

/**
 * The lyrics helper's words in each language: a song idea written mostly in Cyrillic gets Russian lyrics.
 * The section tags stay English (`[Verse 1]`, `[Chorus]`): the music provider reads them as tags.
 */
const LYRICS_WORDS = {
  en: { titles: TITLES, verse: VERSE, chorus: CHORUS, fallback: ['night', 'road', 'heart'] },
  ru: {
    titles: ['{A}', '{A} этой ночью', 'Песня: {A}', '{A} и {B}', 'Там, где {A}', 'Снова {A}'],
    verse: [
      'Где-то рядом — {w}, и река бежит',
      'Снова {w} зовёт меня остаться',
      'Мы были молоды, а рядом — {w}',
      'Не отпускай, пока со мной — {w}',
      'Зажги огонь, пусть светит {w}',
      'За горизонтом — {w}, я слышу твой зов',
      'Считаю шаги, а впереди — {w}',
      'Во мне звучит песня, и в ней — {w}',
      'Бегу сквозь ночь, и мне не страшно: {w}',
      'Это {w} — и это в звёздах',
    ],
    chorus: [
      'О, {T}, забери меня домой',
      '{A} и {B} — мы не одни',
      'Пой громче, пусть сияет {A}',
      'Пока {B} — наш, и твой, и мой',
      'Пусть {A} никогда не гаснет',
      'Мы будем танцевать до рассвета',
    ],
    fallback: ['ночь', 'дорога', 'сердце'],
  },
} as const;

/** The language of a song idea's lyrics: Russian when it has more Cyrillic letters than Latin ones. */
function lyricsLanguage(prompt: string): keyof typeof LYRICS_WORDS {
  const cyrillic = prompt.match(/\p{Script=Cyrillic}/gu)?.length ?? 0;
  const latin = prompt.match(/\p{Script=Latin}/gu)?.length ?? 0;
  return cyrillic > latin ? 'ru' : 'en';
}

function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w)\}/g, (match, k: string) => vars[k] ?? match);
}

function lines(rng: Rng, templates: readonly string[], count: number, words: readonly string[]): string[] {
  const pool = [...templates];
  const out: string[] = [];
  for (let i = 0; i < count && pool.length > 0; i++) {
    const [line] = pool.splice(rng.int(0, pool.length - 1), 1);
    out.push(fill(line ?? '', { w: words[(i + rng.int(0, 2)) % words.length] ?? words[0] ?? '' }));
  }
  return out;
}

/** Reference (music, advanced mode): title max 80, prompt (lyrics) max 5000. */
const LYRICS_TITLE_MAX = 80;
const LYRICS_TEXT_MAX = 5000;

/**
 * Lyrics variants (verses and a repeated chorus) made from the words of the song idea, in its language
 * (`LYRICS_WORDS`).
 */
export function writeLyrics(prompt: string): HelperIO['lyrics']['output'] {
  const lang = LYRICS_WORDS[lyricsLanguage(prompt)];
  const words = keywords(prompt, lang.fallback);
  const count = createRng(prompt, 'lyrics-count').next() < 0.5 ? 2 : 3;
  const variants = Array.from({ length: count }, (_, v) => {
    const rng = createRng(prompt, `lyrics-${v}`);
    const a = words[(v * 2) % words.length] ?? lang.fallback[0];
    const b = words[(v * 2 + 1) % words.length] ?? a;
    const title = fill(rng.pick(lang.titles), { A: capital(a), B: capital(b) });
    const chorus = lines(rng, lang.chorus, 4, words).map((l) => capital(fill(l, { T: title, A: a, B: b })));
    const parts = [
      `[Verse 1]\n${lines(rng, lang.verse, 4, words).join('\n')}`,
      `[Chorus]\n${chorus.join('\n')}`,
      `[Verse 2]\n${lines(rng, lang.verse, 4, [...words].reverse()).join('\n')}`,
      `[Chorus]\n${chorus.join('\n')}`,
    ];
    if (v === 2) parts.push(`[Bridge]\n${lines(rng, lang.verse, 2, [b, a]).join('\n')}`, parts[1] as string);
    // Usable as they are in a song's settings: title 1-80, lyrics (prompt) 1-5000 characters.
    return {
      title: firstChars(title, LYRICS_TITLE_MAX),
      text: firstChars(parts.join('\n\n'), LYRICS_TEXT_MAX),
    };
  });
  return { variants };
}

interface Genre {
  match: RegExp;
  name: string;
  bpm: [number, number];
  instruments: string[];
  production: string;
}

/**
 * `match | name | bpm range | instruments | production`, one genre a line; the match has English and Russian
 * stems (a short Russian one only at a word's start: `широкий` is no rock).
 */
const GENRE_TABLE = `
rock|grunge|(?<![а-яё])рок|гранж | rock | 100-140 | overdriven electric guitars, punchy live drums, driving bass | wide stereo guitars, roomy drum sound
metal|метал | metal | 120-180 | down-tuned distorted guitars, double-kick drums, growling bass | tight, compressed and loud
jazz|swing|джаз|свинг | jazz | 80-140 | upright bass, brushed drums, warm piano, muted trumpet | live room recording, natural dynamics
hip.?hop|rap|trap|хип.?хоп|рэп|трэп | hip hop | 80-100 | deep 808 bass, crisp hi-hats, sampled keys | heavy low end, sidechained pads
edm|electro|house|techno|dance|synth|электр|хаус|техно|танц|синт | electronic | 120-128 | analog synth leads, four-on-the-floor kick, arpeggiated bass | polished club mix with big drops
folk|acoustic|country|фолк|акустич|кантри | folk | 80-110 | fingerpicked acoustic guitar, fiddle, soft percussion | intimate, close-miked and organic
classical|orchestra|cinematic|epic|классич|оркестр|кинемат|эпич | orchestral | 60-100 | string section, french horns, timpani, grand piano | concert-hall reverb, wide dynamics
lo.?fi|chill|ambient|лоу.?фай|чилл|эмбиент | lo-fi | 70-90 | dusty Rhodes piano, vinyl crackle, lazy boom-bap drums | tape-saturated, mellow and warm
r&b|rnb|soul|funk|соул|фанк | soul | 85-110 | slap bass, wah guitar, brass stabs, Hammond organ | groovy, warm analog mix
reggae|latin|salsa|регги|латин|сальса | latin | 90-120 | congas, nylon guitar, offbeat skank guitar | sunny, percussive and bright
pop|(?<![а-яё])поп | pop | 95-125 | bright synth pads, tight electronic drums, catchy piano hook | radio-ready, crisp modern mix`;

const GENRES: readonly Genre[] = GENRE_TABLE.trim()
  .split('\n')
  .map((line) => {
    const [match = '', name = '', bpm = '', instruments = '', production = ''] = line.split(' | ');
    const [lo = 100, hi = 120] = bpm.split('-').map(Number);
    return {
      match: new RegExp(match),
      name,
      bpm: [lo, hi],
      instruments: instruments.split(', '),
      production,
    };
  });
const POP = GENRES[GENRES.length - 1] as Genre;

const MOODS: readonly [RegExp, string][] = [
  [/sad|melanch|lonely|heartbreak|грус/, 'melancholic, bittersweet'],
  [/happy|upbeat|joy|summer|весел/, 'uplifting, sunny'],
  [/dark|night|gloom|тёмн|ноч/, 'dark, brooding'],
  [/calm|chill|relax|soft|спок/, 'relaxed, warm'],
  [/energ|fast|power|aggress/, 'driving, energetic'],
  [/love|romant|любов/, 'tender, romantic'],
];
const KEYS = ['C major', 'G major', 'D minor', 'A minor', 'E minor', 'F major', 'B♭ major'];

/** A detailed music style (genre, tempo, key, instruments, vocals, production) from a short one. */
export function boostStyle(style: string): HelperIO['style-boost']['output'] {
  const text = style.toLowerCase();
  const rng = createRng(style, 'style-boost');
  const genre = GENRES.find((g) => g.match.test(text)) ?? POP;
  const mood = MOODS.find(([re]) => re.test(text))?.[1] ?? rng.pick(['confident, catchy', 'warm, nostalgic']);
  const [lo, hi] = genre.bpm;
  const mid = Math.round((lo + hi) / 2);
  const bpm = /slow|ballad|медл/.test(text)
    ? lo - 10
    : /fast|быстр/.test(text)
      ? hi + 10
      : /sad|calm|chill|soft|melanch|грус/.test(text)
        ? rng.int(lo, mid)
        : rng.int(mid, hi);
  // Whole words for the English voice: "man" inside romantic or german asks for no male voice.
  const vocals = /instrumental|no vocals|инструментал|без вокала|без слов/.test(text)
    ? 'no vocals'
    : /female|woman|жен/.test(text)
      ? 'expressive female vocals'
      : /\b(?:male|man|men)\b|муж/.test(text)
        ? 'raspy male vocals'
        : rng.pick(['breathy female vocals', 'warm male vocals', 'layered harmonies']);
  const detailed = [
    `${style.trim().replace(/[.\s]+$/, '')}: ${mood} ${genre.name}`,
    `${bpm} BPM in ${rng.pick(KEYS)}`,
    genre.instruments.join(', '),
    vocals,
    genre.production,
    rng.pick(['verse-chorus structure with a big final chorus', 'slow build into an anthemic hook']),
  ].join(', ');
  return { style: firstChars(detailed, 1000) };
}

const LIGHT = [
  'soft golden-hour light',
  'dramatic rim lighting',
  'diffused overcast light',
  'warm window light',
];
const FRAMING = ['rule-of-thirds composition', 'low-angle hero shot', 'centered symmetrical framing'];
const FINISH = ['highly detailed textures', 'shallow depth of field, 85 mm lens', 'crisp focus, fine detail'];
const PALETTE = ['warm amber and teal palette', 'muted pastel palette', 'rich saturated colors'];
/** Cues in the caller's words and what they add to the scene. */
const SCENE_CUES: readonly [RegExp, string][] = [
  [/night|moon|dark|ноч/, 'moody moonlight with glowing highlights'],
  [/sunset|dawn|sunrise|закат|рассвет/, 'low sun with long warm shadows'],
  [/snow|winter|frost|снег|зим/, 'crisp winter air and softly falling snow'],
  [/forest|tree|wood|лес/, 'layered foliage and dappled light'],
  [/sea|ocean|beach|wave|море/, 'sparkling water and sea spray'],
  [/city|street|town|город/, 'reflections on wet pavement and distant city lights'],
  [/portrait|face|woman|girl|\bman\b|лицо|портрет/, 'natural skin tones and catchlights in the eyes'],
];
const COLOURS = /\b(red|blue|green|yellow|orange|purple|pink|golden|silver|black|white)\b/g;

/** A richer image description: the caller's subject first, then scene cues, light, framing and finish. */
export function enhancePrompt(prompt: string): HelperIO['enhance']['output'] {
  const rng = createRng(prompt, 'enhance');
  const text = prompt.toLowerCase();
  const cues = SCENE_CUES.filter(([re]) => re.test(text)).map(([, phrase]) => phrase);
  const colours = [...new Set(text.match(COLOURS) ?? [])];
  const richer = [
    prompt.trim().replace(/[.\s]+$/, ''),
    ...cues,
    ...(cues.some((c) => /\blight/.test(c)) ? [] : [rng.pick(LIGHT)]),
    colours.length > 0 ? `vivid accents of ${colours.join(' and ')}` : rng.pick(PALETTE),
    rng.pick(FRAMING),
    rng.pick(FINISH),
    rng.pick(['cinematic atmosphere', 'editorial photography style', 'painterly illustration style']),
  ].join(', ');
  return { prompt: firstChars(richer, 10_000) };
}

/** The built-in generator of library records and helper texts. */
export class LibrarySimulator implements LibraryGenerator {
  readonly #simSpeed: number;

  constructor(deps: { simSpeed: number }) {
    this.#simSpeed = deps.simSpeed;
  }

  #scaled(ms: number): number {
    return Math.max(1, Math.round(ms / this.#simSpeed));
  }

  async ensureAvailable(fields: unknown): Promise<void> {
    if (hasMarker(fields, SIM_MARKERS.unavailable)) throw new GeneratorUnavailable('simulated outage');
  }

  async createRecord(request: LibraryCreateRequest, signal: AbortSignal): Promise<LibraryCreated> {
    await this.ensureAvailable(request.fields);
    const fail = hasMarker(request.fields, SIM_MARKERS.fail);
    if (request.learningMs !== undefined) {
      const outcome = fail
        ? { ok: false as const, reason: 'The generator could not learn from the files (simulated failure).' }
        : { ok: true as const };
      return { data: {}, settles: { afterMs: this.#scaled(request.learningMs), outcome } };
    }
    await sleep(this.#scaled(SIM_LIBRARY_TIMES.save), signal);
    if (fail) throw new LibraryRejected('simulated failure');
    const f = request.fields;
    if (request.library === 'elements') {
      const images = Array.isArray(f['image_urls']) ? (f['image_urls'] as string[]) : [];
      return { data: { cover_url: images[0] ?? f['video_url'] ?? null } };
    }
    return { data: {} };
  }

  async issuePhrase(request: PhraseRequest): Promise<string> {
    const words = request.language === 'ru' ? PHRASE_WORDS.ru : PHRASE_WORDS.en;
    for (let salt = 0; ; salt++) {
      const rng = createRng(`${request.recordId}#${request.attempt}`, `phrase-${salt}`);
      const phrase = `${rng.pick(words.subjects)} ${rng.pick(words.verbs)} ${rng.pick(words.objects)}`;
      if (!request.avoid.includes(phrase) || salt > 50) return phrase;
    }
  }

  async checkRecording(request: RecordingCheck): Promise<LibrarySettlement> {
    const afterMs = this.#scaled(request.typicalMs);
    if (hasMarker(request.name, SIM_MARKERS.fail)) {
      return {
        afterMs,
        outcome: { ok: false, reason: 'The recording does not match the voice (simulated failure).' },
      };
    }
    // A length the probe could not read (a WAV header without samples) is not shown to be long enough.
    if (request.recordingSeconds === undefined) {
      return { afterMs, outcome: { ok: false, reason: 'The length of the recording cannot be read.' } };
    }
    if (request.recordingSeconds < request.minSeconds) {
      return {
        afterMs,
        outcome: { ok: false, reason: `The recording is shorter than ${request.minSeconds} seconds.` },
      };
    }
    return { afterMs, outcome: { ok: true } };
  }

  async runHelper<H extends HelperName>(
    helper: H,
    input: HelperIO[H]['input'],
    signal: AbortSignal,
  ): Promise<HelperIO[H]['output']> {
    await this.ensureAvailable(input);
    await sleep(this.#scaled(SIM_LIBRARY_TIMES.helper), signal);
    const text = Object.values(input).join(' ');
    const outputs: { [K in HelperName]: () => HelperIO[K]['output'] } = {
      lyrics: () => writeLyrics(text),
      'style-boost': () => boostStyle(text),
      enhance: () => enhancePrompt(text),
    };
    return outputs[helper]();
  }
}
