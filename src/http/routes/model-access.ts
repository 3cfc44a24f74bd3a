import type { preValidationHookHandler } from 'fastify';
import { mayUseModel } from '../../accounts/index.ts';
import { errors } from '../../errors.ts';

/**
 * A key restricted to other models is refused before its body or id is validated: the request is for a
 * model the key may not use, so it answers 403 model_not_allowed_for_key whatever the body (reference
 * "Authentication"; the same order as task creation, docs/decisions.md). The routes of a model's
 * libraries and helpers take it as their `preValidation`.
 */
export const keyMayUse =
  (model: string): preValidationHookHandler =>
  (request, _reply, done) => {
    const principal = request.principal;
    done(principal && !mayUseModel(principal, model) ? errors.modelNotAllowedForKey(model) : undefined);
  };
