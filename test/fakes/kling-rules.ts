/** The fake Kling's checks of request bodies against PROVIDERS.md §5; each answers the refusal or null. */

export interface Refusal {
  status: number;
  code: number;
  message: string;
}

const bad = (message: string): Refusal => ({ status: 400, code: 1201, message });
const ASPECTS = ['16:9', '9:16', '1:1'];
const DURATIONS = Array.from({ length: 13 }, (_, i) => String(i + 3));

function isUrl(value: unknown): boolean {
  return typeof value === 'string' && /^https?:\/\//.test(value);
}

function common(body: Record<string, unknown>, models: readonly string[]): Refusal | null {
  if (!models.includes(String(body['model_name'])))
    return bad(`model_name ${String(body['model_name'])} is not supported`);
  if (!['std', 'pro'].includes(String(body['mode'] ?? 'std'))) return bad('mode must be std or pro');
  if (!['on', 'off'].includes(String(body['sound'] ?? 'off'))) return bad('sound must be on or off');
  if (!ASPECTS.includes(String(body['aspect_ratio'])))
    return bad('aspect_ratio is required: 16:9, 9:16 or 1:1');
  if (!DURATIONS.includes(String(body['duration']))) return bad('duration must be "3" to "15"');
  if (body['callback_url'] !== undefined && !isUrl(body['callback_url']))
    return bad('callback_url must be a URL');
  return null;
}

/** `POST /v1/videos/omni-video`; `elements` are the element ids the caller owns. */
export function checkOmni(
  body: Record<string, unknown>,
  models: readonly string[],
  elements: ReadonlySet<string>,
): Refusal | null {
  const base = common(body, models);
  if (base) return base;
  const list = body['element_list'];
  const ids: string[] = [];
  if (list !== undefined) {
    if (!Array.isArray(list)) return bad('element_list must be a list');
    for (const item of list as Record<string, unknown>[]) {
      const id = String(item?.['element_id'] ?? '');
      if (!elements.has(id)) return { status: 404, code: 1203, message: `element ${id} not found` };
      ids.push(id);
    }
    if (ids.length > 7) return bad('at most 7 images and elements');
  }
  const prompts: string[] = [];
  if (body['multi_shot'] === true) {
    if (body['prompt'] !== undefined) return bad('prompt is not used with multi_shot');
    if (!['customize', 'intelligence'].includes(String(body['shot_type']))) return bad('shot_type');
    const shots = body['multi_prompt'];
    if (!Array.isArray(shots) || shots.length < 1 || shots.length > 6)
      return bad('multi_prompt takes 1 to 6 shots');
    let sum = 0;
    for (const [i, shot] of (shots as Record<string, unknown>[]).entries()) {
      if (shot['index'] !== i + 1) return bad('multi_prompt index must count from 1');
      if (typeof shot['prompt'] !== 'string' || shot['prompt'].length > 512) return bad('shot prompt ≤ 512');
      if (typeof shot['duration'] !== 'string' || !/^\d+$/.test(shot['duration']))
        return bad('shot duration "n"');
      sum += Number(shot['duration']);
      prompts.push(shot['prompt']);
    }
    if (String(sum) !== body['duration']) return bad('the shots must sum to duration');
  } else {
    if (typeof body['prompt'] !== 'string' || body['prompt'] === '' || body['prompt'].length > 2500)
      return bad('prompt is required, at most 2500 characters');
    prompts.push(body['prompt']);
  }
  for (const prompt of prompts) {
    for (const m of prompt.matchAll(/<<<element_(\d+)>>>/g)) {
      if (Number(m[1]) < 1 || Number(m[1]) > ids.length)
        return bad(`<<<element_${m[1]}>>> is not in element_list`);
    }
    if (/Element_/.test(prompt)) return bad('labels must be written <<<element_N>>>');
  }
  return null;
}

/** `POST /v1/videos/text2video`. */
export function checkText2Video(body: Record<string, unknown>, models: readonly string[]): Refusal | null {
  const base = common(body, models);
  if (base) return base;
  if (typeof body['prompt'] !== 'string' || body['prompt'] === '' || body['prompt'].length > 2500)
    return bad('prompt is required, at most 2500 characters');
  for (const key of ['element_list', 'multi_shot', 'multi_prompt'])
    if (key in body) return bad(`${key} is not a text2video parameter`);
  return null;
}

/** `POST /v1/general/advanced-custom-elements`. */
export function checkElement(body: Record<string, unknown>): Refusal | null {
  const name = body['element_name'];
  if (typeof name !== 'string' || name === '' || name.length > 20)
    return bad('element_name: 1 to 20 characters');
  const description = body['element_description'];
  if (description !== undefined && (typeof description !== 'string' || description.length > 100))
    return bad('element_description ≤ 100');
  if (body['reference_type'] === 'image_refer') {
    const list = body['element_image_list'] as Record<string, unknown> | undefined;
    if (!isUrl(list?.['frontal_image'])) return bad('element_image_list.frontal_image is required');
    const refer = list?.['refer_images'];
    if (!Array.isArray(refer) || refer.length < 1 || refer.length > 3)
      return bad('refer_images takes 1 to 3 images');
    if (!(refer as Record<string, unknown>[]).every((r) => isUrl(r?.['image_url'])))
      return bad('refer_images[].image_url');
  } else if (body['reference_type'] === 'video_refer') {
    const videos = (body['element_video_list'] as Record<string, unknown> | undefined)?.['refer_videos'];
    if (
      !Array.isArray(videos) ||
      videos.length !== 1 ||
      !isUrl((videos[0] as Record<string, unknown>)?.['video_url'])
    )
      return bad('element_video_list.refer_videos takes one video');
  } else return bad('reference_type must be image_refer or video_refer');
  const tags = body['tag_list'];
  if (tags !== undefined) {
    if (!Array.isArray(tags)) return bad('tag_list must be a list');
    for (const tag of tags as Record<string, unknown>[])
      if (!/^o_10[1-8]$/.test(String(tag?.['tag_id']))) return bad(`unknown tag ${String(tag?.['tag_id'])}`);
  }
  return null;
}
