import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MODELS, settingsJsonSchema } from '../catalog/index.ts';
import { choiceLabel } from './client/schema-checks.ts';
import { html, renderPage } from './html.ts';
import { LIBRARIES } from './libraries-port.ts';
import { fieldsOf, valueLabel } from './pages/library-form.ts';
import { taskBody } from './pages/task-detail.ts';
import { fill, isFlashKey, wordsOf } from './words.ts';
import {
  kindLabel,
  modeLabel,
  modelLabel,
  RU_MODE_NAMES,
  RU_MODEL_NAMES,
  settingWords,
} from './words-settings.ts';

test('the Russian words are the interface’s own, not copies of the English ones', () => {
  const en = wordsOf('en');
  const ru = wordsOf('ru');
  assert.deepEqual(Object.keys(ru).sort(), Object.keys(en).sort());
  const same = Object.keys(en).filter((k) => en[k as keyof typeof en] === ru[k as keyof typeof ru]);
  // The product's name and each language's own name are the same in both.
  assert.deepEqual(same.sort(), ['english', 'russian', 'title']);
  for (const [k, v] of Object.entries(ru)) assert.ok(v.trim() !== '', k);
});

test('the accessible names of CONTRACT §13 in both languages', () => {
  const pick = (lang: 'en' | 'ru') => {
    const w = wordsOf(lang);
    return [w.email, w.password, w.language, w.signUp, w.signIn, w.signOut, w.createKey, w.revoke];
  };
  assert.deepEqual(pick('en'), [
    'E-mail',
    'Password',
    'Language',
    'Sign up',
    'Sign in',
    'Sign out',
    'Create key',
    'Revoke',
  ]);
  assert.deepEqual(pick('ru'), [
    'Эл. почта',
    'Пароль',
    'Язык',
    'Зарегистрироваться',
    'Войти',
    'Выйти',
    'Создать ключ',
    'Отозвать',
  ]);
});

test('flash keys are only the flash_ words; placeholders are filled', () => {
  assert.equal(isFlashKey('flash_revoked'), true);
  assert.equal(isFlashKey('title'), false);
  assert.equal(isFlashKey('flash_nope'), false);
  assert.equal(isFlashKey(undefined), false);
  assert.equal(fill('Revoke {name}? {other}', { name: 'ci' }), 'Revoke ci? {other}');
});

test('every model and mode of the catalog has a Russian name; English pages show the catalog’s own', () => {
  for (const model of MODELS) {
    assert.ok(RU_MODEL_NAMES[model.key], `model ${model.key} has no Russian name (words-settings.ts)`);
    assert.equal(modelLabel('en', model), `${model.name} (${model.key})`);
    assert.equal(modelLabel('ru', model), `${RU_MODEL_NAMES[model.key]} (${model.key})`);
    for (const mode of model.modes) {
      assert.ok(RU_MODE_NAMES[mode.name], `mode ${mode.name} has no Russian name (words-settings.ts)`);
      assert.equal(modeLabel('en', mode.name), mode.name);
    }
  }
  assert.equal(modeLabel('ru', 'text_to_model'), 'Из текста (text_to_model)');
});

test('the console names every kind of model in Russian, after which the API name; English shows the API name', () => {
  for (const model of MODELS) {
    assert.equal(kindLabel('en', model.kind), model.kind);
    assert.match(kindLabel('ru', model.kind), new RegExp(`^[А-ЯЁ3][^()]* \\(${model.kind}\\)$`), model.kind);
  }
  assert.equal(kindLabel('ru', 'video'), 'Видео (video)');
  assert.equal(kindLabel('ru', 'unknown'), 'unknown', 'a kind without a name shows as it is');
});

test('every value a library form offers has a Russian word; English pages show the API value', () => {
  const [en, ru] = [wordsOf('en'), wordsOf('ru')];
  let values = 0;
  for (const decl of LIBRARIES) {
    for (const field of fieldsOf(decl.body)) {
      for (const value of field.schema.enum ?? []) {
        // A ready voice to start from is a name, not a word: the form shows its preset's name (library-form.ts).
        if (decl.presets?.some((preset) => preset.id === value)) continue;
        values++;
        assert.equal(valueLabel(en, String(value)), String(value));
        assert.match(
          valueLabel(ru, String(value)),
          new RegExp(`^[А-ЯЁ][^()]* \\(${String(value)}\\)$`),
          String(value),
        );
      }
    }
  }
  assert.ok(values >= 7, 'the element tags and the style types at least');
  assert.equal(valueLabel(ru, 'vector'), 'Векторный (vector)');
});

test('every choice of the catalog that is a word has a Russian name on both the form and the task page', () => {
  const words: string[] = [];
  const walk = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    const values = (node as { enum?: unknown[] }).enum ?? [];
    for (const v of values) if (typeof v === 'string' && /^[a-z][a-z_]*$/.test(v)) words.push(v);
    Object.values(node).forEach(walk);
  };
  for (const model of MODELS) for (const mode of model.modes) walk(settingsJsonSchema(mode.schema));
  assert.ok(words.includes('detailed') && words.includes('align_image'), 'the 3D qualities and orientation');
  for (const value of words) {
    assert.equal(choiceLabel(value, settingWords('en')), value, 'English pages show the API value');
    assert.match(choiceLabel(value, settingWords('ru')), new RegExp(`^[А-ЯЁ][^()]* \\(${value}\\)$`), value);
  }
  assert.equal(choiceLabel('720p', settingWords('ru')), '720p', 'a value that is no word shows as it is');
  assert.equal(choiceLabel('', settingWords('ru')), '""');
  // The task's page names the mode and the choices as the form does; the API values stay beside them.
  const task = {
    id: '01900000-0000-7000-8000-000000000000',
    model: 'model-3d',
    mode: 'text_to_model',
    status: 'failed' as const,
    settings: {
      task_type: 'text_to_model',
      texture_quality: 'detailed',
      orientation: 'default',
      face_limit: 500,
    },
    price: { amount_minor: 100, currency: 'RUB' },
    progress: 0,
    created_at: '2026-01-01T00:00:00Z',
    started_at: null,
  };
  const page = (lang: 'en' | 'ru') => renderPage(taskBody(task, html`<i></i>`, wordsOf(lang), lang));
  const ru = page('ru');
  assert.match(ru, /<dd>Из текста \(text_to_model\)<\/dd>/);
  assert.match(ru, /<dd>Детальное \(detailed\)<\/dd>/);
  assert.match(ru, /<dd>По умолчанию \(default\)<\/dd>/);
  const en = page('en');
  assert.match(en, /<dd>text_to_model<\/dd>/);
  assert.match(en, /<dd>detailed<\/dd>/);
});
