/**
 * Words of the new-task form's settings, by the names the catalog's schemas use (the same name means the
 * same thing in every model): labels (`setting:<name>`), and hints where a schema describes the setting
 * (`hint:<name>`, instead of its English description). A numbered name (`voice_2`) takes its base's label
 * and number. A name without a word here shows as the schema's own name made readable; a test checks that
 * every setting of every model has words in both languages, and that none equals a label of the page
 * itself (`Model`, `Mode`): a control is found by its label.
 */

import type { Lang } from '../i18n/index.ts';

export const en = {
  'setting:task_type': 'Kind of task',
  'setting:model_version': 'Model version',
  'setting:texture': 'Texture',
  'setting:pbr': 'PBR materials',
  'setting:texture_quality': 'Texture quality',
  'setting:geometry_quality': 'Geometry quality',
  'setting:face_limit': 'Face limit',
  'setting:auto_size': 'Real-world size',
  'setting:quad': 'Quad mesh',
  'setting:smart_low_poly': 'Smart low poly',
  'setting:generate_parts': 'Separate parts',
  'setting:prompt': 'Prompt',
  'setting:negative_prompt': 'Negative prompt',
  'setting:orientation': 'Orientation',
  'setting:texture_alignment': 'Texture alignment',
  'setting:enable_image_autofix': 'Fix the picture first',
  'setting:image_url': 'Picture',
  'setting:front_url': 'Front view',
  'setting:left_url': 'Left view',
  'setting:back_url': 'Back view',
  'setting:right_url': 'Right view',
  'setting:mode': 'Mode of the run',
  'setting:model': 'Model version at the provider',
  'setting:quality': 'Quality',
  'setting:aspect_ratio': 'Aspect ratio',
  'setting:duration': 'Duration',
  'setting:image_urls': 'Pictures',
  'setting:multi_shots': 'Several shots',
  'setting:multi_shot': 'Several shots',
  'setting:shots': 'Shots',
  'setting:audio': 'Sound',
  'setting:audio2': 'Second track',
  'setting:ref_image_urls': 'Reference pictures',
  'setting:ref_video_urls': 'Reference videos',
  'setting:ref_audio_urls': 'Reference sounds',
  'setting:first_frame_url': 'First frame',
  'setting:customMode': 'Custom mode (own lyrics and style)',
  'setting:songDescription': 'Song description',
  'setting:title': 'Title',
  'setting:style': 'Style',
  'setting:instrumental': 'Instrumental (no vocals)',
  'setting:vocalGender': 'Voice gender',
  'setting:styleWeight': 'Style weight',
  'setting:weirdnessConstraint': 'Weirdness',
  'setting:audioWeight': 'Weight of the source audio',
  'setting:persona': 'Persona',
  'setting:voice': 'Voice',
  'setting:soundDescription': 'Sound description',
  'setting:soundLoop': 'Loop',
  'setting:soundTempo': 'Tempo, BPM',
  'setting:soundKey': 'Key',
  'setting:negativeTags': 'Styles to avoid',
  'setting:tags': 'Styles',
  'setting:continueAt': 'Continue from, seconds',
  'setting:defaultParamFlag': 'Default parameters',
  'setting:infillStartS': 'Replace from, seconds',
  'setting:infillEndS': 'Replace to, seconds',
  'setting:fullLyrics': 'Full lyrics',
  'setting:length': 'Length',
  'setting:text': 'Text',
  'setting:style_id': 'Style',
  'setting:size': 'Size',
  'setting:n': 'Number of pictures',
  'setting:character_ids': 'Characters',
  'setting:audio_ids': 'Voices',
  'hint:character_ids': 'Ids of your characters (Libraries → video-omni characters), up to 3.',
  'hint:audio_ids': 'Ids of your voices or ready ones (Libraries → video-omni voices), up to 3.',
} as const;

export const ru: Record<keyof typeof en, string> = {
  'setting:task_type': 'Вид задачи',
  'setting:model_version': 'Версия модели',
  'setting:texture': 'Текстура',
  'setting:pbr': 'PBR-материалы',
  'setting:texture_quality': 'Качество текстуры',
  'setting:geometry_quality': 'Качество геометрии',
  'setting:face_limit': 'Предел числа граней',
  'setting:auto_size': 'Реальный размер',
  'setting:quad': 'Четырёхугольная сетка',
  'setting:smart_low_poly': 'Умный low poly',
  'setting:generate_parts': 'Отдельные части',
  'setting:prompt': 'Описание (промпт)',
  'setting:negative_prompt': 'Чего избегать',
  'setting:orientation': 'Ориентация',
  'setting:texture_alignment': 'Выравнивание текстуры',
  'setting:enable_image_autofix': 'Сначала исправить изображение',
  'setting:image_url': 'Изображение',
  'setting:front_url': 'Вид спереди',
  'setting:left_url': 'Вид слева',
  'setting:back_url': 'Вид сзади',
  'setting:right_url': 'Вид справа',
  'setting:mode': 'Режим генерации',
  'setting:model': 'Версия модели у поставщика',
  'setting:quality': 'Качество',
  'setting:aspect_ratio': 'Соотношение сторон',
  'setting:duration': 'Длительность',
  'setting:image_urls': 'Изображения',
  'setting:multi_shots': 'Несколько сцен',
  'setting:multi_shot': 'Несколько сцен',
  'setting:shots': 'Сцены',
  'setting:audio': 'Звук',
  'setting:audio2': 'Вторая дорожка',
  'setting:ref_image_urls': 'Образцы изображений',
  'setting:ref_video_urls': 'Образцы видео',
  'setting:ref_audio_urls': 'Образцы звука',
  'setting:first_frame_url': 'Первый кадр',
  'setting:customMode': 'Свой режим (свой текст и стиль)',
  'setting:songDescription': 'Описание песни',
  'setting:title': 'Название',
  'setting:style': 'Стиль',
  'setting:instrumental': 'Инструментал (без вокала)',
  'setting:vocalGender': 'Пол голоса',
  'setting:styleWeight': 'Вес стиля',
  'setting:weirdnessConstraint': 'Необычность',
  'setting:audioWeight': 'Вес исходного звука',
  'setting:persona': 'Персона',
  'setting:voice': 'Голос',
  'setting:soundDescription': 'Описание звука',
  'setting:soundLoop': 'Зациклить',
  'setting:soundTempo': 'Темп, уд./мин',
  'setting:soundKey': 'Тональность',
  'setting:negativeTags': 'Каких стилей избегать',
  'setting:tags': 'Стили',
  'setting:continueAt': 'Продолжить с секунды',
  'setting:defaultParamFlag': 'Параметры по умолчанию',
  'setting:infillStartS': 'Заменить с секунды',
  'setting:infillEndS': 'Заменить до секунды',
  'setting:fullLyrics': 'Полный текст песни',
  'setting:length': 'Длина',
  'setting:text': 'Текст',
  'setting:style_id': 'Стиль',
  'setting:size': 'Размер',
  'setting:n': 'Число изображений',
  'setting:character_ids': 'Персонажи',
  'setting:audio_ids': 'Голоса',
  'hint:character_ids': 'Id ваших персонажей (Библиотеки → персонажи video-omni), до 3.',
  'hint:audio_ids': 'Id ваших или готовых голосов (Библиотеки → голоса video-omni), до 3.',
};

/**
 * Russian names of the catalog's models and modes for the dashboard's choosers and filters. English pages
 * show the catalog's own names (GET /v1/models `name`) and the modes' API names; a test checks that every
 * model and mode of the catalog has a Russian name here.
 */
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

/** A model as the choosers show it: its name in the page's language, then its key. */
export function modelLabel(lang: Lang, model: { key: string; name: string }): string {
  const name = lang === 'ru' ? (RU_MODEL_NAMES[model.key] ?? model.name) : model.name;
  return `${name} (${model.key})`;
}

/** A mode as the chooser shows it: its API name, after its Russian name on Russian pages. */
export function modeLabel(lang: Lang, mode: string): string {
  const name = lang === 'ru' ? RU_MODE_NAMES[mode] : undefined;
  return name === undefined ? mode : `${name} (${mode})`;
}
