// SubtleCrypto's methods beyond digest: WebIDL argument conversion and algorithm normalisation
// here, keys and cryptography in Rust (web/subtle/, `internal.subtle`). A CryptoKey's material
// never reaches JavaScript: its record holds an opaque native handle, and only exportKey of an
// extractable key reads the material back out. Evaluated on first use of one of these methods.
(function (internal) {
  "use strict";

  const { DOMException } = internal.load("events");
  const { makeKey, keyRecord } = internal.load("crypto");
  const native = internal.subtle;

  const FORMATS = ["raw", "spki", "pkcs8", "jwk"];
  const USAGES = ["encrypt", "decrypt", "sign", "verify", "deriveKey", "deriveBits", "wrapKey", "unwrapKey"];
  const SIGNING = {
    HMAC: {}, Ed25519: {}, ECDSA: { hash: "hash" },
    "RSASSA-PKCS1-v1_5": {}, "RSA-PSS": { saltLength: "ulong" },
  };
  const RSA_GENERATE = { modulusLength: "ulong", publicExponent: "bigint", hash: "hash" };
  const EC_KEY = { namedCurve: "string" };
  const RSA_KEY = { hash: "hash" };
  const CIPHERS = {
    "AES-GCM": { iv: "bytes", additionalData: "bytes?", tagLength: "octet?" },
    "AES-CBC": { iv: "bytes" },
  };
  const HMAC_KEY = { hash: "hash", length: "ulong?" };
  const AES_LENGTH = { length: "ushort" };
  // The algorithms each operation knows, and the members of each one's parameter dictionary.
  const OPERATIONS = {
    digest: { "SHA-1": {}, "SHA-256": {}, "SHA-384": {}, "SHA-512": {} },
    sign: SIGNING,
    verify: SIGNING,
    encrypt: CIPHERS,
    decrypt: CIPHERS,
    generateKey: {
      HMAC: HMAC_KEY, "AES-GCM": AES_LENGTH, "AES-CBC": AES_LENGTH,
      Ed25519: {}, ECDSA: EC_KEY, "RSASSA-PKCS1-v1_5": RSA_GENERATE, "RSA-PSS": RSA_GENERATE,
    },
    importKey: {
      HMAC: HMAC_KEY, "AES-GCM": {}, "AES-CBC": {}, PBKDF2: {}, HKDF: {},
      Ed25519: {}, ECDSA: EC_KEY, "RSASSA-PKCS1-v1_5": RSA_KEY, "RSA-PSS": RSA_KEY,
    },
    deriveBits: {
      PBKDF2: { salt: "bytes", iterations: "ulong", hash: "hash" },
      HKDF: { hash: "hash", salt: "bytes", info: "bytes" },
    },
    getKeyLength: { HMAC: HMAC_KEY, "AES-GCM": AES_LENGTH, "AES-CBC": AES_LENGTH, PBKDF2: {}, HKDF: {} },
  };
  const LIMITS = { ulong: 4294967295, ushort: 65535, octet: 255 };
  const JWK_STRINGS = ["kty", "use", "alg", "crv", "x", "y", "d", "n", "e", "p", "q", "dp", "dq", "qi", "k"];

  function bytes(value, what) {
    if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
    if (ArrayBuffer.isView(value)) {
      return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
    }
    throw new TypeError(`${what} is not an ArrayBuffer, TypedArray or DataView`);
  }

  // WebIDL [EnforceRange] integers.
  function integer(value, type, what) {
    const number = Number(value);
    if (!Number.isFinite(number)) throw new TypeError(`${what} is not a finite number`);
    const truncated = Math.trunc(number);
    if (truncated < 0 || truncated > LIMITS[type]) throw new TypeError(`${what} is outside the accepted range`);
    return truncated;
  }

  // The spec's "normalize an algorithm": the canonical name (case-insensitive lookup among the
  // operation's algorithms) and the members of its parameter dictionary, converted.
  function normalize(operation, algorithm) {
    if (typeof algorithm === "string") return normalize(operation, { name: algorithm });
    if (algorithm !== undefined && algorithm !== null && typeof algorithm !== "object" && typeof algorithm !== "function") {
      throw new TypeError("Algorithm: not an object or a string");
    }
    const name = algorithm?.name;
    if (name === undefined) throw new TypeError("Algorithm: name is missing");
    const wanted = String(name).toUpperCase();
    const table = OPERATIONS[operation];
    const canonical = Object.keys(table).find((known) => known.toUpperCase() === wanted);
    if (canonical === undefined) throw new DOMException("Unrecognized algorithm name", "NotSupportedError");
    const result = { name: canonical };
    const members = table[canonical];
    for (const member of Object.keys(members).sort()) {
      let type = members[member];
      const optional = type.endsWith("?");
      if (optional) type = type.slice(0, -1);
      const value = algorithm[member];
      const what = `${canonical}: ${member}`;
      if (value === undefined) {
        if (optional) continue;
        throw new TypeError(`${what} is missing`);
      }
      if (type === "hash") result[member] = normalize("digest", value).name;
      else if (type === "bytes") result[member] = bytes(value, what);
      else if (type === "string") result[member] = String(value);
      else if (type === "bigint") {
        if (!(value instanceof Uint8Array)) throw new TypeError(`${what} is not a Uint8Array`);
        result[member] = Array.from(value);
      } else result[member] = integer(value, type, what);
    }
    return result;
  }

  // The normalised algorithm for Rust: every member but the byte strings, which go as arguments.
  function json(algorithm) {
    return JSON.stringify(algorithm, (key, value) => (value instanceof Uint8Array ? undefined : value));
  }

  function usages(value, method) {
    if (value === null || typeof value !== "object" || typeof value[Symbol.iterator] !== "function") {
      throw new TypeError(`Failed to execute '${method}' on 'SubtleCrypto': keyUsages is not a sequence`);
    }
    const list = [];
    for (const usage of value) {
      const text = String(usage);
      if (!USAGES.includes(text)) {
        throw new TypeError(`Failed to execute '${method}' on 'SubtleCrypto': '${text}' is not a valid KeyUsage`);
      }
      list.push(text);
    }
    return JSON.stringify(list);
  }

  function format(value, method) {
    const text = String(value);
    if (!FORMATS.includes(text)) {
      throw new TypeError(`Failed to execute '${method}' on 'SubtleCrypto': '${text}' is not a valid KeyFormat`);
    }
    return text;
  }

  function jwk(value) {
    if (value === null || typeof value !== "object") throw new TypeError("keyData is not a JsonWebKey");
    const out = {};
    for (const member of JWK_STRINGS) if (value[member] !== undefined) out[member] = String(value[member]);
    if (value.ext !== undefined) out.ext = Boolean(value.ext);
    if (value.key_ops !== undefined) out.key_ops = Array.from(value.key_ops, String);
    return JSON.stringify(out);
  }

  function needs(args, count, method) {
    if (args.length < count) {
      throw new TypeError(`Failed to execute '${method}' on 'SubtleCrypto': ${count} arguments required, but only ${args.length} present.`);
    }
  }

  function handle(key, what) {
    const record = keyRecord(key);
    if (record === undefined) throw new TypeError(`${what} is not a CryptoKey`);
    return record.handle;
  }

  // A CryptoKey from the native [handle, info JSON] pair.
  function fromNative(handle, info) {
    const { type, extractable, algorithm, usages } = JSON.parse(info);
    if (algorithm.hash !== undefined) algorithm.hash = { name: algorithm.hash };
    if (algorithm.publicExponent !== undefined) algorithm.publicExponent = new Uint8Array(algorithm.publicExponent);
    return makeKey({ handle, type, extractable, algorithm, usages });
  }

  function keyOrPair(made, name) {
    if (made.length === 2) return fromNative(made[0], made[1]);
    const publicKey = fromNative(made[0], made[1]);
    const privateKey = fromNative(made[2], made[3]);
    // Node 22 lists an Ed25519 pair's privateKey first, and an ECDSA or RSA pair's publicKey.
    return name === "Ed25519" ? { privateKey, publicKey } : { publicKey, privateKey };
  }

  // The length deriveKey derives for a key of the normalised `algorithm` (null: no fixed length).
  function keyLength(algorithm) {
    switch (algorithm.name) {
      case "HMAC":
        if (algorithm.length === undefined) return algorithm.hash === "SHA-384" || algorithm.hash === "SHA-512" ? 1024 : 512;
        if (algorithm.length === 0) throw new TypeError("HMAC: length cannot be 0");
        return algorithm.length;
      case "AES-GCM":
      case "AES-CBC":
        if (![128, 192, 256].includes(algorithm.length)) {
          throw new DOMException("AES key length must be 128, 192 or 256 bits", "OperationError");
        }
        return algorithm.length;
      default:
        return null;
    }
  }

  const methods = {
    async importKey(...args) {
      needs(args, 5, "importKey");
      const [formatValue, keyData, algorithm, extractable, keyUsages] = args;
      const kind = format(formatValue, "importKey");
      const list = usages(keyUsages, "importKey");
      const data = kind === "jwk" ? jwk(keyData) : bytes(keyData, "keyData");
      const normalized = normalize("importKey", algorithm);
      const [key, info] = native.importKey(kind, data, json(normalized), Boolean(extractable), list);
      return fromNative(key, info);
    },
    async exportKey(...args) {
      needs(args, 2, "exportKey");
      const kind = format(args[0], "exportKey");
      const exported = native.exportKey(kind, handle(args[1], "key"));
      return kind === "jwk" ? JSON.parse(exported) : exported;
    },
    async generateKey(...args) {
      needs(args, 3, "generateKey");
      const [algorithm, extractable, keyUsages] = args;
      const list = usages(keyUsages, "generateKey");
      const normalized = normalize("generateKey", algorithm);
      return keyOrPair(await native.generateKey(json(normalized), Boolean(extractable), list), normalized.name);
    },
    async sign(...args) {
      needs(args, 3, "sign");
      const [algorithm, key, data] = args;
      const target = handle(key, "key");
      const input = bytes(data, "data");
      const normalized = normalize("sign", algorithm);
      return native.sign(json(normalized), target, input);
    },
    async verify(...args) {
      needs(args, 4, "verify");
      const [algorithm, key, signature, data] = args;
      const target = handle(key, "key");
      const sig = bytes(signature, "signature");
      const input = bytes(data, "data");
      const normalized = normalize("verify", algorithm);
      return native.verify(json(normalized), target, sig, input);
    },
    async encrypt(...args) {
      needs(args, 3, "encrypt");
      const [algorithm, key, data] = args;
      const target = handle(key, "key");
      const input = bytes(data, "data");
      const normalized = normalize("encrypt", algorithm);
      return native.encrypt(json(normalized), target, input, normalized.iv, normalized.additionalData, true);
    },
    async decrypt(...args) {
      needs(args, 3, "decrypt");
      const [algorithm, key, data] = args;
      const target = handle(key, "key");
      const input = bytes(data, "data");
      const normalized = normalize("decrypt", algorithm);
      return native.encrypt(json(normalized), target, input, normalized.iv, normalized.additionalData, false);
    },
    async deriveBits(...args) {
      needs(args, 2, "deriveBits");
      const [algorithm, baseKey, length = null] = args;
      const key = handle(baseKey, "baseKey");
      const bits = length === null ? null : integer(length, "ulong", "length");
      const normalized = normalize("deriveBits", algorithm);
      return native.deriveBits(json(normalized), key, bits, normalized.salt, normalized.info, "deriveBits");
    },
    async deriveKey(...args) {
      needs(args, 5, "deriveKey");
      const [algorithm, baseKey, derivedKeyType, extractable, keyUsages] = args;
      const key = handle(baseKey, "baseKey");
      const list = usages(keyUsages, "deriveKey");
      const normalized = normalize("deriveBits", algorithm);
      const imported = normalize("importKey", derivedKeyType);
      const length = keyLength(normalize("getKeyLength", derivedKeyType));
      const bits = await native.deriveBits(json(normalized), key, length, normalized.salt, normalized.info, "deriveKey");
      const [made, info] = native.importKey("raw", new Uint8Array(bits), json(imported), Boolean(extractable), list);
      return fromNative(made, info);
    },
  };

  return { methods };
})
