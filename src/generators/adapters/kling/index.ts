export { createKlingAdapter, KLING_BASE_URL, KlingAdapter } from './adapter.ts';
export { ELEMENT_POLL_MS, elementBody } from './elements.ts';
export { klingToken } from './jwt.ts';
export { KLING_V3_MODEL, videoBody } from './wire.ts';
