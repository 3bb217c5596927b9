/**
 * The one source of randomness in standin.
 *
 * Everything random (UUIDs, nanoid IDs, blocking-query jitter, any simulated
 * choice) is drawn from a single seeded sfc32 generator, so the same seed and
 * the same sequence of calls give the same values, and the generator's state
 * can be captured in a snapshot and restored exactly.
 *
 * sfc32 ("Small Fast Chaotic", Chris Doty-Humphrey, from PractRand) is a
 * 128-bit-state generator that passes PractRand and BigCrush, needs only
 * 32-bit integer arithmetic (fast in JS) and has a trivially serialisable state.
 */
import { customRandom, urlAlphabet } from "nanoid";

export interface RngState {
  readonly algorithm: "sfc32";
  /** The four 32-bit words a, b, c, d (the last is sfc32's counter). */
  readonly words: readonly [number, number, number, number];
}

/** Largest seed accepted: seeds are JSON numbers, so keep them exact. */
export const MAX_SEED = Number.MAX_SAFE_INTEGER;

export class Ids {
  private a = 0;
  private b = 0;
  private c = 0;
  private d = 0;

  constructor(seed: number) {
    this.reseed(seed);
  }

  static fromState(state: RngState): Ids {
    const ids = new Ids(0);
    ids.restore(state);
    return ids;
  }

  /**
   * Derives the 128-bit state from the seed with splitmix32, the usual way to
   * expand a small seed so that nearby seeds (1, 2, 3…) give unrelated streams.
   */
  reseed(seed: number): void {
    assertSeed(seed);
    const low = seed >>> 0;
    const high = Math.floor(seed / 0x1_0000_0000) >>> 0;
    const mix = splitmix32(low ^ Math.imul(high, 0x9e3779b9));
    this.a = mix();
    this.b = mix();
    this.c = mix() ^ high;
    this.d = 1; // sfc32's counter conventionally starts at 1
    // Discard the first outputs: sfc32's state needs a few rounds to mix.
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform float in [0, 1) with 32 bits of randomness. */
  float(): number {
    return this.nextUint32() / 0x1_0000_0000;
  }

  /** Uniform integer in [0, bound), without modulo bias (rejection sampling). */
  int(bound: number): number {
    if (!Number.isInteger(bound) || bound <= 0 || bound > 0x1_0000_0000) {
      throw new RangeError(`Ids.int: bound must be an integer in 1..2^32, got ${bound}`);
    }
    const limit = 0x1_0000_0000 - (0x1_0000_0000 % bound);
    let x = this.nextUint32();
    while (x >= limit) x = this.nextUint32();
    return x % bound;
  }

  bytes(count: number): Uint8Array {
    const out = new Uint8Array(count);
    for (let i = 0; i < count; i += 4) {
      let word = this.nextUint32();
      for (let j = i; j < Math.min(i + 4, count); j++) {
        out[j] = word & 0xff;
        word >>>= 8;
      }
    }
    return out;
  }

  /**
   * A UUID as both real products make them: 16 random bytes printed as
   * lowercase 8-4-4-4-12 hex. Neither Nomad's nor Consul's generator sets the
   * RFC 4122 version/variant bits, so neither do we.
   */
  uuid(): string {
    const hex = toHex(this.bytes(16));
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /** A nanoid (URL-safe alphabet by default) drawn from this generator through nanoid's custom-random API. */
  nanoid(size = 21, alphabet: string = urlAlphabet): string {
    return customRandom(alphabet, size, (n) => this.bytes(n))();
  }

  /**
   * Extra wait for blocking queries: uniform in [0, maxMs), as the real
   * products' RandomStagger(wait/16). Zero when maxMs is below one millisecond.
   */
  jitterMs(maxMs: number): number {
    const bound = Math.floor(maxMs);
    return bound <= 0 ? 0 : this.int(Math.min(bound, 0x1_0000_0000));
  }

  state(): RngState {
    return { algorithm: "sfc32", words: [this.a >>> 0, this.b >>> 0, this.c >>> 0, this.d >>> 0] };
  }

  restore(state: RngState): void {
    if (state?.algorithm !== "sfc32" || !Array.isArray(state.words) || state.words.length !== 4) {
      throw new TypeError("Ids.restore: not an sfc32 state");
    }
    for (const w of state.words) {
      if (!Number.isInteger(w) || w < 0 || w > 0xffff_ffff) throw new TypeError("Ids.restore: state words must be uint32");
    }
    [this.a, this.b, this.c, this.d] = state.words.map((w) => w | 0) as [number, number, number, number];
  }
}

export function assertSeed(seed: number): void {
  if (!Number.isInteger(seed) || seed < 0 || seed > MAX_SEED) {
    throw new RangeError(`seed must be an integer from 0 to ${MAX_SEED}, got ${seed}`);
  }
}

function splitmix32(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x9e3779b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function toHex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += HEX[b];
  return s;
}
