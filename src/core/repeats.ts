/**
 * Clients repeat themselves: a poller sends the same headers, path and body
 * request after request. What the emulator makes from them and keeps (the
 * journal's and the tape's entries) can then be one value made once instead
 * of a fresh copy per request, which every request would otherwise promote
 * into the old generation for the garbage collector to mark and sweep.
 *
 * Only for values that are a pure function of their key and never changed
 * once made (freeze objects you hand out).
 */
export class LastMade<K, V> {
  private key: K | undefined;
  private value: V | undefined;
  private held = false;

  constructor(
    private readonly same: (a: K, b: K) => boolean,
    private readonly make: (key: K) => V,
  ) {}

  get(key: K): V {
    if (this.held && this.same(key, this.key as K)) return this.value as V;
    const value = this.make(key);
    this.key = key;
    this.value = value;
    this.held = true;
    return value;
  }
}

export function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Byte-for-byte equality (small arrays compared in place; larger ones by memcmp). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  if (a.length <= 64) {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  return Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));
}
