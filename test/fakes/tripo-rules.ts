/**
 * The documented rules of Tripo's `POST /task` and `POST /upload` (PROVIDERS.md §1), as the fake enforces
 * them: a refusal names the field and carries Tripo's code, so an adapter that breaks a rule fails loudly.
 */

export const TRIPO_VERSIONS = [
  'v3.1-20260211',
  'v3.0-20250812',
  'v2.5-20250123',
  'v2.0-20240919',
  'P1-20260311',
  'Turbo-v1.0-20250506',
] as const;
/** What Tripo runs when `model_version` is left out. */
export const TRIPO_DEFAULT_VERSION = 'v2.5-20250123';

/** A refusal: Tripo's error code and message. */
export interface TripoRefusal {
  status: number;
  code: number;
  message: string;
}

/** An uploaded picture: whose it is and what it is. */
export interface UploadedPicture {
  key: string;
  type: 'jpg' | 'png';
}

const TYPES = ['text_to_model', 'image_to_model', 'multiview_to_model'];
const BOOLEANS = [
  'texture',
  'pbr',
  'auto_size',
  'quad',
  'smart_low_poly',
  'generate_parts',
  'enable_image_autofix',
];
const IMAGE_ONLY = ['orientation', 'texture_alignment', 'enable_image_autofix'];
const ENUMS: Readonly<Record<string, readonly string[]>> = {
  texture_quality: ['standard', 'detailed'],
  geometry_quality: ['standard', 'detailed'],
  orientation: ['default', 'align_image'],
  texture_alignment: ['original_image', 'geometry'],
};
const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;

const bad = (message: string): TripoRefusal => ({ status: 400, code: 1004, message });

function checkFile(
  value: unknown,
  field: string,
  key: string,
  uploads: ReadonlyMap<string, UploadedPicture>,
): TripoRefusal | null {
  if (typeof value !== 'object' || value === null) return bad(`${field} must be an object`);
  const file = value as Record<string, unknown>;
  if (typeof file['file_token'] !== 'string') return bad(`${field}.file_token is required`);
  const upload = uploads.get(file['file_token']);
  if (upload === undefined || upload.key !== key)
    return { status: 400, code: 2003, message: `${field}: unknown file_token` };
  if (file['type'] !== upload.type)
    return {
      status: 400,
      code: 2003,
      message: `${field}.type ${String(file['type'])} is not ${upload.type}`,
    };
  return null;
}

function checkFaceLimit(body: Record<string, unknown>, version: string): TripoRefusal | null {
  const faces = body['face_limit'];
  if (faces === undefined) return null;
  if (typeof faces !== 'number' || !Number.isInteger(faces) || faces < 1)
    return bad('face_limit must be a positive integer');
  // Each flag's range holds (PROVIDERS.md §1): with both, their overlap.
  const ranges: Array<[number, number]> = [
    ...(body['quad'] === true ? [[500, 10_000] as [number, number]] : []),
    ...(body['smart_low_poly'] === true ? [[1_000, 20_000] as [number, number]] : []),
  ];
  if (ranges.length === 0 && version.startsWith('P1')) ranges.push([48, 20_000]);
  const range: [number, number] | null =
    ranges.length === 0 ? null : [Math.max(...ranges.map((r) => r[0])), Math.min(...ranges.map((r) => r[1]))];
  if (range && (faces < range[0] || faces > range[1]))
    return bad(`face_limit must be ${range[0]} to ${range[1]}`);
  return null;
}

function checkPictures(
  body: Record<string, unknown>,
  key: string,
  uploads: ReadonlyMap<string, UploadedPicture>,
): TripoRefusal | null {
  if (body['type'] === 'image_to_model') return checkFile(body['file'], 'file', key, uploads);
  const files = body['files'];
  if (!Array.isArray(files) || files.length !== 4) return bad('files must hold exactly 4 views');
  let present = 0;
  for (const [index, view] of files.entries()) {
    const empty = typeof view === 'object' && view !== null && Object.keys(view).length === 0;
    if (empty && index === 0) return bad('files[0] (front) is required');
    if (empty) continue;
    const refused = checkFile(view, `files[${index}]`, key, uploads);
    if (refused) return refused;
    present += 1;
  }
  return present < 2 ? bad('multiview_to_model needs at least 2 pictures') : null;
}

/** The first rule `body` breaks for the key's task, or null when Tripo would take it. */
export function checkTaskBody(
  body: unknown,
  key: string,
  uploads: ReadonlyMap<string, UploadedPicture>,
): TripoRefusal | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return bad('body must be an object');
  const task = body as Record<string, unknown>;
  const type = task['type'];
  if (typeof type !== 'string' || !TYPES.includes(type))
    return { status: 400, code: 2002, message: `unsupported task type ${String(type)}` };
  const version = task['model_version'] ?? TRIPO_DEFAULT_VERSION;
  if (typeof version !== 'string' || !(TRIPO_VERSIONS as readonly string[]).includes(version))
    return { status: 400, code: 2017, message: `invalid model_version ${String(version)}` };
  for (const field of BOOLEANS)
    if (task[field] !== undefined && typeof task[field] !== 'boolean')
      return bad(`${field} must be a boolean`);
  for (const [field, values] of Object.entries(ENUMS))
    if (task[field] !== undefined && !values.includes(task[field] as string))
      return bad(`${field} must be one of ${values.join(', ')}`);
  if (task['geometry_quality'] !== undefined && !version.startsWith('v3.'))
    return bad('geometry_quality is for v3.x only');
  if (type === 'text_to_model') {
    const prompt = task['prompt'];
    if (typeof prompt !== 'string' || prompt === '' || prompt.length > 1024)
      return bad('prompt must be 1 to 1024 characters');
    if (/\p{Extended_Pictographic}/u.test(prompt)) return bad('prompt must not contain emoji');
    const negative = task['negative_prompt'];
    if (negative !== undefined && (typeof negative !== 'string' || negative.length > 255))
      return bad('negative_prompt must be at most 255 characters');
    for (const field of IMAGE_ONLY) if (task[field] !== undefined) return bad(`${field} is for image tasks`);
  } else {
    if (task['prompt'] !== undefined) return bad('prompt is for text_to_model');
    const refused = checkPictures(task, key, uploads);
    if (refused) return refused;
  }
  if (
    task['generate_parts'] === true &&
    (task['texture'] !== false || task['pbr'] !== false || task['quad'] === true)
  )
    return bad('generate_parts needs texture: false, pbr: false and quad: false');
  return checkFaceLimit(task, version);
}

/** PNG pixel size from its IHDR chunk; JPEG is taken on its magic alone. */
function pngSize(bytes: Uint8Array): [number, number] | null {
  if (bytes.length < 24) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return [view.getUint32(16), view.getUint32(20)];
}

/** The picture type of an upload, or its refusal (JPEG/PNG, ≤20 MB, 20–6000 px). */
export function checkUpload(bytes: Uint8Array): { type: 'jpg' | 'png' } | TripoRefusal {
  if (bytes.length > MAX_UPLOAD_BYTES) return { status: 400, code: 2004, message: 'file larger than 20 MB' };
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { type: 'jpg' };
  if (bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) {
    const size = pngSize(bytes);
    if (size === null || size.some((side) => side < 20 || side > 6000))
      return { status: 400, code: 2004, message: 'picture must be 20 to 6000 pixels a side' };
    return { type: 'png' };
  }
  return { status: 400, code: 2004, message: 'unsupported file type: JPEG or PNG only' };
}
