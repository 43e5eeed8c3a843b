// Web Crypto: `crypto.getRandomValues`, `crypto.randomUUID` (the OS random source),
// `crypto.subtle.digest` (SHA-1, SHA-256, SHA-384, SHA-512 natively) and CryptoKey. The other
// SubtleCrypto methods are subtle.js's, evaluated on first use (README lists the algorithms).
(function (internal) {
  "use strict";

  const { DOMException } = internal.load("events");
  const ILLEGAL = Symbol("internal");
  const INTEGER_ARRAYS = [
    Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
    BigInt64Array, BigUint64Array,
  ];
  const DIGESTS = { "SHA-1": "SHA-1", "SHA-256": "SHA-256", "SHA-384": "SHA-384", "SHA-512": "SHA-512" };

  // Each CryptoKey's record: { handle (native, opaque), type, extractable, algorithm, usages }.
  const KEYS = new WeakMap();
  function keyRecord(key) {
    return typeof key === "object" && key !== null ? KEYS.get(key) : undefined;
  }
  function slot(key) {
    const record = keyRecord(key);
    if (record === undefined) throw new TypeError("Illegal invocation");
    return record;
  }

  class CryptoKey {
    constructor(key = undefined) {
      if (key !== ILLEGAL) throw new TypeError("Illegal constructor");
    }
    get type() { return slot(this).type; }
    get extractable() { return slot(this).extractable; }
    get algorithm() { return slot(this).algorithm; }
    get usages() { return slot(this).usages; }
  }
  Object.defineProperty(CryptoKey.prototype, Symbol.toStringTag, { value: "CryptoKey", configurable: true });

  function makeKey(record) {
    const key = new CryptoKey(ILLEGAL);
    KEYS.set(key, record);
    return key;
  }

  // subtle.js's methods, its script evaluated on the first call of one.
  const more = () => internal.load("subtle").methods;

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
    async importKey(format, keyData, algorithm, extractable, keyUsages) { return more().importKey(...arguments); }
    async exportKey(format, key) { return more().exportKey(...arguments); }
    async generateKey(algorithm, extractable, keyUsages) { return more().generateKey(...arguments); }
    async sign(algorithm, key, data) { return more().sign(...arguments); }
    async verify(algorithm, key, signature, data) { return more().verify(...arguments); }
    async encrypt(algorithm, key, data) { return more().encrypt(...arguments); }
    async decrypt(algorithm, key, data) { return more().decrypt(...arguments); }
    async deriveBits(algorithm, baseKey) { return more().deriveBits(...arguments); }
    async deriveKey(algorithm, baseKey, derivedKeyType, extractable, keyUsages) { return more().deriveKey(...arguments); }
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

  return { Crypto, CryptoKey, SubtleCrypto, crypto: new Crypto(ILLEGAL), makeKey, keyRecord };
})
