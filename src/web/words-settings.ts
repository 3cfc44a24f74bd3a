/**
 * Russian words of the new-task form and the task choosers, by the names the catalog uses (the same setting
 * name means the same thing in every model). English pages show the catalog's own words: a setting's name
 * made readable (or its schema `title`; a name that would read as a control of the page has its own word), its schema `description` as the hint, the models' `name` and the
 * modes' API names. Tests check that every setting, model and mode of the catalog has Russian words here,
 * and that no setting's label equals a label of the page itself (`Модель`, `Режим`): a control is found by
 * its label.
 */
import type { ModelKind } from '../catalog/index.ts';
import type { Lang } from '../i18n/index.ts';

/** Labels of the settings. A numbered name (`voice_2`) takes its base's label and number. */
export const RU_SETTING_LABELS: Readonly<Record<string, string>> = {
  task_type: 'Вид задачи',
  model_version: 'Версия модели',
  texture: 'Текстура',
  pbr: 'PBR-материалы',
  texture_quality: 'Качество текстуры',
  geometry_quality: 'Качество геометрии',
  face_limit: 'Предел числа граней',
  auto_size: 'Реальный размер',
  quad: 'Четырёхугольная сетка',
  smart_low_poly: 'Умный low poly',
  generate_parts: 'Отдельные части',
  prompt: 'Описание (промпт)',
  negative_prompt: 'Чего избегать',
  orientation: 'Ориентация',
  texture_alignment: 'Выравнивание текстуры',
  enable_image_autofix: 'Сначала исправить изображение',
  image_url: 'Изображение',
  front_url: 'Вид спереди',
  left_url: 'Вид слева',
  back_url: 'Вид сзади',
  right_url: 'Вид справа',
  mode: 'Режим генерации',
  model: 'Версия модели у поставщика',
  quality: 'Качество',
  aspect_ratio: 'Соотношение сторон',
  duration: 'Длительность',
  image_urls: 'Изображения',
  multi_shots: 'Несколько сцен',
  multi_shot: 'Несколько сцен',
  shots: 'Сцены',
  audio: 'Звук',
  audio2: 'Вторая дорожка',
  ref_image_urls: 'Образцы изображений',
  ref_video_urls: 'Образцы видео',
  ref_audio_urls: 'Образцы звука',
  first_frame_url: 'Первый кадр',
  customMode: 'Свой режим (свой текст и стиль)',
  songDescription: 'Описание песни',
  title: 'Название',
  style: 'Стиль',
  instrumental: 'Инструментал (без вокала)',
  vocalGender: 'Пол голоса',
  styleWeight: 'Вес стиля',
  weirdnessConstraint: 'Необычность',
  audioWeight: 'Вес исходного звука',
  persona: 'Персона',
  voice: 'Голос',
  soundDescription: 'Описание звука',
  soundLoop: 'Зациклить',
  soundTempo: 'Темп, уд./мин',
  soundKey: 'Тональность',
  negativeTags: 'Каких стилей избегать',
  tags: 'Стили',
  continueAt: 'Продолжить с секунды',
  defaultParamFlag: 'Параметры по умолчанию',
  infillStartS: 'Заменить с секунды',
  infillEndS: 'Заменить до секунды',
  fullLyrics: 'Полный текст песни',
  length: 'Длина',
  text: 'Текст',
  style_id: 'Стиль',
  size: 'Размер',
  n: 'Число изображений',
  character_ids: 'Персонажи',
  audio_ids: 'Голоса',
};

/** Hints of the settings a schema describes, instead of its English description. */
export const RU_SETTING_HINTS: Readonly<Record<string, string>> = {
  character_ids: 'Id ваших персонажей (Библиотеки → персонажи video-omni), до 3.',
  audio_ids: 'Id ваших или готовых голосов (Библиотеки → голоса video-omni), до 3.',
  multi_shots: 'Только «нет»: несколько сцен бывают лишь в старых версиях модели, не в 3_0.',
};

/**
 * English pages show a setting's name made readable, except where that would read as one of the page's
 * own controls: music's and video's `model` setting would be a second control labelled `Model` beside the
 * model chooser (and a `mode` setting one labelled `Mode`).
 */
const EN_SETTING_WORDS: Readonly<Record<string, string>> = Object.freeze({
  'setting:model': 'Provider model version',
  'setting:mode': 'Generation mode',
});
/**
 * Names of the settings' choices that are English words (`standard`, `align_image`, `m`), by their API
 * value, the same value meaning the same thing in every setting: the form's choosers and the task's page
 * show them before the value (`choiceLabel`), as a mode's name. Values that are no words (`720p`, `16:9`,
 * `V6`, `C#m`, `v3.0`) show as they are. The API values themselves never change.
 */
export const RU_CHOICE_NAMES: Readonly<Record<string, string>> = {
  standard: 'Стандартное',
  detailed: 'Детальное',
  default: 'По умолчанию',
  align_image: 'По изображению',
  original_image: 'По исходному изображению',
  geometry: 'По геометрии',
  m: 'Мужской',
  f: 'Женский',
};

/** Built once: a task's page asks for it once per setting. */
const RU_SETTING_WORDS: Readonly<Record<string, string>> = Object.freeze({
  ...Object.fromEntries(Object.entries(RU_SETTING_LABELS).map(([name, label]) => [`setting:${name}`, label])),
  ...Object.fromEntries(Object.entries(RU_SETTING_HINTS).map(([name, hint]) => [`hint:${name}`, hint])),
  ...Object.fromEntries(Object.entries(RU_CHOICE_NAMES).map(([value, name]) => [`choice:${value}`, name])),
});

/**
 * The settings' words the new-task island looks up in the page's language (`setting:<name>`,
 * `hint:<name>`, `choice:<value>`); English pages have only the few that keep labels apart and otherwise fall back to the
 * schemas.
 */
export function settingWords(lang: Lang): Readonly<Record<string, string>> {
  return lang === 'ru' ? RU_SETTING_WORDS : EN_SETTING_WORDS;
}

/** Names of the catalog's models, shown before their keys in the choosers and filters. */
export const RU_MODEL_NAMES: Readonly<Record<string, string>> = {
  'model-3d': 'Генератор 3D-моделей',
  video: 'Видео 3.0 (кадры, образец, omni)',
  music: 'Песни и звуки',
  'video-elements': 'Видео с сохранёнными элементами',
  voice: 'Речь клонированным голосом',
  image: 'Изображения в своих стилях',
  'music-styles': 'Музыка в своих стилях',
  'video-omni': 'Видео с сохранёнными персонажами и голосами',
};

/** Names of the modes, shown before their API names in the mode chooser. */
export const RU_MODE_NAMES: Readonly<Record<string, string>> = {
  text_to_model: 'Из текста',
  image_to_model: 'Из изображения',
  multiview_to_model: 'Из нескольких ракурсов',
  frames: 'По кадрам',
  reference: 'По образцу',
  omni: 'Omni',
  generate: 'Новая песня',
  sounds: 'Звуки',
  add_vocals: 'Добавить вокал',
  add_instrumental: 'Добавить аккомпанемент',
  cover_upload: 'Кавер',
  extend: 'Продолжить',
  replace_upload: 'Заменить часть',
  mashup: 'Мэшап',
  default: 'Основной',
  text_to_dialogue: 'Текст в диалог',
  voice_change: 'Смена голоса',
};

/** A model's name in the page's language. */
export function modelName(lang: Lang, model: { key: string; name: string }): string {
  return lang === 'ru' ? (RU_MODEL_NAMES[model.key] ?? model.name) : model.name;
}

/** A model as the choosers show it: its name in the page's language, then its key. */
export function modelLabel(lang: Lang, model: { key: string; name: string }): string {
  return `${modelName(lang, model)} (${model.key})`;
}

/** A mode as the chooser shows it: its API name, after its Russian name on Russian pages. */
export function modeLabel(lang: Lang, mode: string): string {
  const name = lang === 'ru' ? RU_MODE_NAMES[mode] : undefined;
  return name === undefined ? mode : `${name} (${mode})`;
}

/** The kinds of model in Russian; a new kind must be named here (the record covers every kind). */
const RU_KIND_NAMES: Readonly<Record<ModelKind, string>> = {
  '3d': '3D-модели',
  video: 'Видео',
  audio: 'Песни и звуки',
  speech: 'Речь',
  image: 'Изображения',
};

/** A model's kind as the console shows it: its API name, after its Russian name on Russian pages. */
export function kindLabel(lang: Lang, kind: string): string {
  const name =
    lang === 'ru' && Object.hasOwn(RU_KIND_NAMES, kind) ? RU_KIND_NAMES[kind as ModelKind] : undefined;
  return name === undefined ? kind : `${name} (${kind})`;
}
