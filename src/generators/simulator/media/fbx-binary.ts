/**
 * A small writer of binary FBX 7.4 files (the layout Autodesk's SDK and Blender write): a 27-byte
 * header, node records with 32-bit offsets, typed properties (arrays above 128 bytes deflated), 13-byte
 * null records closing nested lists, and the fixed footer.
 */
import { deflateSync } from 'node:zlib';

/** One typed FBX property. */
export type FbxProp =
  | { type: 'C'; value: boolean }
  | { type: 'I'; value: number }
  | { type: 'L'; value: bigint }
  | { type: 'D'; value: number }
  | { type: 'S'; value: string }
  | { type: 'R'; value: Uint8Array }
  | { type: 'i'; value: Int32Array }
  | { type: 'd'; value: Float64Array };

/** One node record: a name, its properties and nested nodes. */
export interface FbxNode {
  name: string;
  props: FbxProp[];
  children: FbxNode[];
}

/** FBX version written in the header and footer. */
export const FBX_VERSION = 7400;
const HEADER_MAGIC = Buffer.from('Kaydara FBX Binary  \u0000\u001a\u0000', 'latin1');
const NULL_RECORD = Buffer.alloc(13);
const FOOTER_ID = Buffer.from('fabcab09d0c8d466b176fb831cf7267e', 'hex');
const FOOTER_MAGIC = Buffer.from('f85a8c6adef5d97eece90ce3758f290b', 'hex');

/** Builds a node; property values are typed with the helpers below. */
export function fbxNode(name: string, props: FbxProp[] = [], children: FbxNode[] = []): FbxNode {
  return { name, props, children };
}

/** Property helpers, named after the FBX type codes. */
export const P = {
  bool: (value: boolean): FbxProp => ({ type: 'C', value }),
  int: (value: number): FbxProp => ({ type: 'I', value }),
  long: (value: bigint): FbxProp => ({ type: 'L', value }),
  double: (value: number): FbxProp => ({ type: 'D', value }),
  str: (value: string): FbxProp => ({ type: 'S', value }),
  raw: (value: Uint8Array): FbxProp => ({ type: 'R', value }),
  ints: (value: Int32Array): FbxProp => ({ type: 'i', value }),
  doubles: (value: Float64Array): FbxProp => ({ type: 'd', value }),
};

/** A `P` entry of a `Properties70` block: name, type, label, flags (`A` animatable), then values. */
export function fbxProperty70(
  name: string,
  type: string,
  label: string,
  flags: string,
  ...values: FbxProp[]
): FbxNode {
  return fbxNode('P', [P.str(name), P.str(type), P.str(label), P.str(flags), ...values]);
}

function encodeArray(code: string, data: Buffer, length: number): Buffer {
  const compress = data.length > 128;
  const payload = compress ? deflateSync(data, { level: 1 }) : data;
  const head = Buffer.alloc(13);
  head.write(code, 0, 'latin1');
  head.writeUInt32LE(length, 1);
  head.writeUInt32LE(compress ? 1 : 0, 5);
  head.writeUInt32LE(payload.length, 9);
  return Buffer.concat([head, payload]);
}

function encodeProp(prop: FbxProp): Buffer {
  switch (prop.type) {
    case 'C':
      return Buffer.from([0x43, prop.value ? 1 : 0]);
    case 'I': {
      const b = Buffer.alloc(5);
      b.write('I', 0, 'latin1');
      b.writeInt32LE(prop.value, 1);
      return b;
    }
    case 'L': {
      const b = Buffer.alloc(9);
      b.write('L', 0, 'latin1');
      b.writeBigInt64LE(prop.value, 1);
      return b;
    }
    case 'D': {
      const b = Buffer.alloc(9);
      b.write('D', 0, 'latin1');
      b.writeDoubleLE(prop.value, 1);
      return b;
    }
    case 'S':
    case 'R': {
      const data = prop.type === 'S' ? Buffer.from(prop.value, 'utf8') : Buffer.from(prop.value);
      const head = Buffer.alloc(5);
      head.write(prop.type, 0, 'latin1');
      head.writeUInt32LE(data.length, 1);
      return Buffer.concat([head, data]);
    }
    case 'i':
    case 'd': {
      const v = prop.value;
      return encodeArray(prop.type, Buffer.from(v.buffer, v.byteOffset, v.byteLength), v.length);
    }
  }
}

function encodeNode(node: FbxNode, start: number, isLast: boolean): Buffer {
  const name = Buffer.from(node.name, 'latin1');
  if (name.length > 255) throw new RangeError(`FBX node name too long: ${node.name}`);
  const props = node.props.map(encodeProp);
  const propsLength = props.reduce((sum, b) => sum + b.length, 0);
  let offset = start + 13 + name.length + propsLength;
  const children: Buffer[] = [];
  node.children.forEach((child, i) => {
    const encoded = encodeNode(child, offset, i === node.children.length - 1);
    children.push(encoded);
    offset += encoded.length;
  });
  // Nested lists end with a null record; so do property-less nodes that are not last (as Blender writes).
  const sentinel = node.children.length > 0 || (node.props.length === 0 && !isLast);
  if (sentinel) offset += NULL_RECORD.length;
  const head = Buffer.alloc(13);
  head.writeUInt32LE(offset, 0);
  head.writeUInt32LE(props.length, 4);
  head.writeUInt32LE(propsLength, 8);
  head.writeUInt8(name.length, 12);
  return Buffer.concat([head, name, ...props, ...children, ...(sentinel ? [NULL_RECORD] : [])]);
}

/** Serialises top-level nodes into a complete binary FBX 7.4 file. */
export function encodeFbx(nodes: FbxNode[]): Buffer {
  const version = Buffer.alloc(4);
  version.writeUInt32LE(FBX_VERSION, 0);
  const parts: Buffer[] = [HEADER_MAGIC, version];
  let offset = HEADER_MAGIC.length + 4;
  for (const [i, node] of nodes.entries()) {
    const encoded = encodeNode(node, offset, i === nodes.length - 1);
    parts.push(encoded);
    offset += encoded.length;
  }
  parts.push(NULL_RECORD, FOOTER_ID, Buffer.alloc(4));
  offset += NULL_RECORD.length + FOOTER_ID.length + 4;
  // Pad to a 16-byte boundary (a full 16 bytes when already aligned), then version, zeros and magic.
  const pad = ((offset + 15) & ~15) - offset || 16;
  parts.push(Buffer.alloc(pad), version, Buffer.alloc(120), FOOTER_MAGIC);
  return Buffer.concat(parts);
}
