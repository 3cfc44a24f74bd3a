/**
 * Model state: the operator's per-model switches (availability, active-task limit) kept in the
 * database, joined with the catalog. The catalog itself stays pure declarations.
 */
import { type ModelKind, type ModelSpec, settingsJsonSchema } from '../catalog/index.ts';
import { bumpEpoch, type Db, KeptUntilEpoch, type ModelSettingsTable, prepared } from '../db/index.ts';
import { errors } from '../errors.ts';
import { type Clock, oncePerTurn } from '../lib/index.ts';
import { markLibraryFields } from './library-marks.ts';

/** Default simultaneous unfinished tasks of one model per account (CONTRACT §3). */
export const DEFAULT_MAX_ACTIVE = 10;

/** An operator's change of a model: only the fields given change. */
export interface ModelPatch {
  available?: boolean;
  /** Simultaneous unfinished tasks per account; null: back to the service default (`DEFAULT_MAX_ACTIVE`). */
  maxActive?: number | null;
}

export interface ModeView {
  name: string;
  /** JSON Schema (draft 2020-12) of the mode's settings, as callers send them. */
  settings_schema: Record<string, unknown>;
}

export interface ModelView {
  key: string;
  kind: ModelKind;
  name: string;
  available: boolean;
  /** Settings field that selects the mode, or null for a single-mode model. */
  mode_field: string | null;
  /** Simultaneous unfinished tasks of this model per account. */
  max_active: number;
  modes: ModeView[];
}

interface ModelState {
  available: boolean;
  maxActive: number;
}

const modelState = prepared<{ key: string }, Pick<ModelSettingsTable, 'available' | 'max_active'>>(
  (db, value) =>
    db.selectFrom('model_settings').select(['available', 'max_active']).where('key', '=', value('key')),
);

/** The `epochs` counter that every change of a model's state moves (`ModelService.update`). */
const MODELS_EPOCH = 'model_settings';

/** The catalog joined with the operator's per-model state (availability, active-task limit). */
export class ModelService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #models: readonly ModelSpec[];
  readonly #modes = new Map<string, ModeView[]>();
  /** On SQLite, each model's state while the models' epoch stays (see `state`). */
  readonly #states: KeptUntilEpoch<string, ModelState>;
  /** The models' epoch, read at most once per turn of the event loop (null on PostgreSQL). */
  readonly #modelsEpoch: () => number | null;

  constructor(deps: { db: Db; clock: Clock; models: readonly ModelSpec[] }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#models = deps.models;
    this.#states = new KeptUntilEpoch(Math.max(1, deps.models.length));
    this.#modelsEpoch = oncePerTurn(() => this.#db.readEpoch(MODELS_EPOCH));
    // Schemas are derived once: they are pure functions of the catalog.
    for (const model of this.#models) {
      this.#modes.set(
        model.key,
        model.modes.map((mode) => ({
          name: mode.name,
          settings_schema: markLibraryFields(settingsJsonSchema(mode.schema), mode),
        })),
      );
    }
  }

  /** Settings schemas of every mode, named `Settings.<model>.<mode>`, for the OpenAPI document. */
  settingsSchemas(): Record<string, Record<string, unknown>> {
    const schemas: Record<string, Record<string, unknown>> = {};
    for (const [model, modes] of this.#modes) {
      for (const mode of modes) {
        const { $schema: _dialect, ...schema } = mode.settings_schema;
        schemas[`Settings.${model}.${mode.name}`] = schema;
      }
    }
    return schemas;
  }

  find(key: string): ModelSpec | undefined {
    return this.#models.find((m) => m.key === key);
  }

  /**
   * The model's state now. Every creation asks; on SQLite the answer is kept until the models' epoch
   * moves, read straight on the handle once per turn of the event loop (`oncePerTurn`, as the key cache
   * reads its epoch: every creation of a turn arrived before the turn began, so a change committed before
   * a creation arrived is always seen), so the operator's change, in this process or another, counts from
   * the next creation on. (A read in the middle of the change's own transaction may
   * see its uncommitted epoch: the row read after it waits for that transaction's end, and a rollback
   * moves the epoch back, which only forgets the kept answer early.) PostgreSQL reads the row every time.
   */
  async state(key: string): Promise<ModelState> {
    const epoch = this.#modelsEpoch();
    const kept = epoch === null ? undefined : this.#states.get(epoch, key);
    if (kept !== undefined) return kept;
    const row = (await modelState(this.#db.db, { key })).rows[0];
    const state = {
      available: row ? row.available === 1 : true,
      maxActive: row?.max_active ?? DEFAULT_MAX_ACTIVE,
    };
    if (epoch !== null) this.#states.set(epoch, key, state);
    return state;
  }

  /** Models visible to a key: all of them, or only the key's own when it is restricted. */
  async list(allowed: readonly string[] | null): Promise<ModelView[]> {
    const rows = await this.#db.db.selectFrom('model_settings').selectAll().execute();
    const states = new Map(rows.map((r) => [r.key, r]));
    return this.#models
      .filter((m) => allowed === null || allowed.includes(m.key))
      .map((m) => {
        const row = states.get(m.key);
        return this.#view(m, {
          available: row ? row.available === 1 : true,
          maxActive: row?.max_active ?? DEFAULT_MAX_ACTIVE,
        });
      });
  }

  /**
   * GET /v1/models/{key}: the model as the list shows it. An unknown key is 404 model_not_found; a model a
   * restricted key may not use is 403 model_not_allowed_for_key, as everywhere a path names a model.
   */
  async view(key: string, allowed: readonly string[] | null): Promise<ModelView> {
    const model = this.find(key);
    if (!model) throw errors.modelNotFound(key);
    if (allowed !== null && !allowed.includes(model.key)) throw errors.modelNotAllowedForKey(model.key);
    return this.#view(model, await this.state(model.key));
  }

  /** Operator: switches a model on or off and/or sets its active-task limit. */
  async update(key: string, patch: ModelPatch): Promise<ModelView | null> {
    const model = this.find(key);
    if (!model) return null;
    const updatedAt = this.#clock.now().toISOString();
    // Only the fields given are written, in the row's own statement: a field read before and written back
    // would undo another operator's change made in between (one switching the model off while another
    // sets its limit). A model without a row starts from the defaults `state` reads.
    const next = await this.#db.dialect.transaction(this.#db.db, async (tx) => {
      const row = await tx
        .insertInto('model_settings')
        .values({
          key,
          available: (patch.available ?? true) ? 1 : 0,
          max_active: patch.maxActive ?? null,
          updated_at: updatedAt,
        })
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({
            ...(patch.available === undefined ? {} : { available: patch.available ? 1 : 0 }),
            ...(patch.maxActive === undefined ? {} : { max_active: patch.maxActive }),
            updated_at: updatedAt,
          }),
        )
        .returning(['available', 'max_active'])
        .executeTakeFirstOrThrow();
      await bumpEpoch(tx, MODELS_EPOCH);
      return { available: row.available === 1, maxActive: row.max_active ?? DEFAULT_MAX_ACTIVE };
    });
    return this.#view(model, next);
  }

  #view(model: ModelSpec, state: ModelState): ModelView {
    return {
      key: model.key,
      kind: model.kind,
      name: model.name,
      available: state.available,
      mode_field: model.modeField,
      max_active: state.maxActive,
      modes: this.#modes.get(model.key) ?? [],
    };
  }
}
