import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MODELS } from '../catalog/index.ts';
import { fill, isFlashKey, wordsOf } from './words.ts';
import { modeLabel, modelLabel, RU_MODE_NAMES, RU_MODEL_NAMES } from './words-settings.ts';

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
