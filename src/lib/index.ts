export { Alarm } from './alarm.ts';
export { BoundedMap } from './bounded-map.ts';
export { type Clock, DbClock, moscowDay } from './clock.ts';
export { uuidv7 } from './ids.ts';
export { hasNul } from './nul.ts';
export { oncePerTurn, oncePerTurnAsync } from './once-per-turn.ts';
export { randomBase62 } from './random.ts';
export { Repeating } from './repeating.ts';
export { ByteCounter } from './streams.ts';
