// Web Crypto: `crypto.getRandomValues`, `crypto.randomUUID` (the OS random source) and
// `crypto.subtle.digest` (SHA-1, SHA-256, SHA-384, SHA-512 natively). The other SubtleCrypto
// methods are not offered (README lists what exists).
(function (internal) {
  "use strict";

  const { DOMException } = internal.load("events");
  const ILLEGAL = Symbol("internal");
  const INTEGER_ARRAYS = [
    Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
    BigInt64Array, BigUint64Array,
  ];
  const DIGESTS = { "SHA-1": "SHA-1", "SHA-256": "SHA-256", "SHA-384": "SHA-384", "SHA-512": "SHA-512" };

  class CryptoKey {
    constructor(key = undefined) {
      if (key !== ILLEGAL) throw new TypeError("Illegal constructor");
    }
  }
  Object.defineProperty(CryptoKey.prototype, Symbol.toStringTag, { value: "CryptoKey", configurable: true });

  function bufferSource(data) {
    if (data instanceof ArrayBuffer) return new Uint8Array(data);
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    throw new TypeError("The \"data\" argument must be an ArrayBuffer or ArrayBufferView");
  }

  class SubtleCrypto {
    constructor(key = undefined) {
      if (key !== ILLEGAL) throw new TypeError("Illegal constructor");
    }
    async digest(algorithm, data) {
      if (arguments.length < 2) throw new TypeError("SubtleCrypto.digest needs an algorithm and data");
      const name = typeof algorithm === "string" ? algorithm : algorithm?.name;
      if (name === undefined) throw new TypeError("Algorithm: name is missing");
      const canonical = DIGESTS[String(name).toUpperCase()];
      if (canonical === undefined) {
        throw new DOMException("Unrecognized algorithm name", "NotSupportedError");
      }
      return internal.digest(canonical, bufferSource(data).slice());
    }
  }
  Object.defineProperty(SubtleCrypto.prototype, Symbol.toStringTag, { value: "SubtleCrypto", configurable: true });

  const subtle = new SubtleCrypto(ILLEGAL);

  class Crypto {
    constructor(key = undefined) {
      if (key !== ILLEGAL) throw new TypeError("Illegal constructor");
    }
    get subtle() { return subtle; }
    getRandomValues(array) {
      if (!INTEGER_ARRAYS.some((Kind) => array instanceof Kind)) {
        throw new DOMException(
          "The data argument must be an integer-type TypedArray", "TypeMismatchError");
      }
      if (array.byteLength > 65536) {
        throw new DOMException(
          `The ArrayBufferView's byte length (${array.byteLength}) exceeds the number of bytes of entropy available via this API (65536)`,
          "QuotaExceededError");
      }
      internal.randomFill(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
      return array;
    }
    randomUUID() { return internal.randomUUID(); }
  }
  Object.defineProperty(Crypto.prototype, Symbol.toStringTag, { value: "Crypto", configurable: true });

  return { Crypto, CryptoKey, SubtleCrypto, crypto: new Crypto(ILLEGAL) };
})
