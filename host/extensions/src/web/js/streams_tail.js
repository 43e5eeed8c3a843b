
  const {
    ReadableStream, ReadableStreamDefaultReader, ReadableStreamBYOBReader,
    ReadableStreamBYOBRequest, ReadableStreamDefaultController, ReadableByteStreamController,
    WritableStream, WritableStreamDefaultWriter, WritableStreamDefaultController,
    TransformStream, TransformStreamDefaultController, ByteLengthQueuingStrategy,
    CountQueuingStrategy,
  } = exports;

  function chunkBytes(chunk) {
    if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
    if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    throw new TypeError("The \"chunk\" argument must be of type ArrayBuffer or ArrayBufferView");
  }

  /// Sets `klass.prototype[Symbol.toStringTag]` (what Object.prototype.toString reports).
  function tagClass(klass, name) {
    Object.defineProperty(klass.prototype, Symbol.toStringTag, { value: name, configurable: true });
  }

  class TextEncoderStream {
    #transform;
    constructor() {
      const encoder = new TextEncoder();
      let pending = "";
      this.#transform = new TransformStream({
        transform(chunk, controller) {
          let text = pending + String(chunk);
          pending = "";
          const last = text.charCodeAt(text.length - 1);
          if (last >= 0xd800 && last <= 0xdbff) {
            pending = text.slice(-1);
            text = text.slice(0, -1);
          }
          if (text.length > 0) controller.enqueue(encoder.encode(text));
        },
        flush(controller) {
          if (pending !== "") controller.enqueue(new Uint8Array([0xef, 0xbf, 0xbd]));
        },
      });
    }
    get encoding() { return "utf-8"; }
    get readable() { return this.#transform.readable; }
    get writable() { return this.#transform.writable; }
  }
  tagClass(TextEncoderStream, "TextEncoderStream");

  /// How many bytes at the end of `bytes` begin a UTF-8 sequence that is not complete yet.
  function incompleteTail(bytes) {
    const n = bytes.length;
    for (let back = 1; back <= Math.min(3, n); back++) {
      const byte = bytes[n - back];
      if ((byte & 0xc0) === 0x80) continue; // continuation byte
      const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return need > back ? back : 0;
    }
    return 0;
  }

  class TextDecoderStream {
    #transform;
    #encoding;
    #fatal;
    #ignoreBOM;
    constructor(label = "utf-8", options = undefined) {
      // The label is checked (and named) by TextDecoder itself.
      this.#encoding = new TextDecoder(label).encoding;
      this.#fatal = !!options?.fatal;
      this.#ignoreBOM = !!options?.ignoreBOM;
      const keepBom = this.#ignoreBOM;
      const fatal = this.#fatal;
      let stripBom = !this.#ignoreBOM;
      let pending = new Uint8Array(0);
      const utf8 = this.#encoding === "utf-8";
      const bigEndian = this.#encoding === "utf-16be";
      let firstUtf16 = true;
      this.#transform = new TransformStream({
        transform(chunk, controller) {
          const incoming = chunkBytes(chunk);
          const bytes = new Uint8Array(pending.length + incoming.length);
          bytes.set(pending, 0);
          bytes.set(incoming, pending.length);
          if (!utf8) {
            // UTF-16: whole code units only, and a high surrogate waits for its pair.
            let cut = bytes.length - (bytes.length % 2);
            if (cut >= 2) {
              const last = bigEndian ? (bytes[cut - 2] << 8) | bytes[cut - 1] : (bytes[cut - 1] << 8) | bytes[cut - 2];
              if (last >= 0xd800 && last <= 0xdbff) cut -= 2;
            }
            pending = bytes.slice(cut);
            if (cut === 0) return;
            const decoder = new TextDecoder(label, { ignoreBOM: !firstUtf16 || keepBom });
            firstUtf16 = false;
            const text = decoder.decode(bytes.slice(0, cut));
            if (text.length > 0) controller.enqueue(text);
            return;
          }
          const cut = bytes.length - incompleteTail(bytes);
          pending = bytes.slice(cut);
          if (cut === 0) return;
          const text = internal.decodeUtf8(bytes.subarray(0, cut), fatal, stripBom);
          stripBom = false;
          if (text.length > 0) controller.enqueue(text);
        },
        flush(controller) {
          if (pending.length === 0) return;
          if (fatal) throw new TypeError(`The encoded data was not valid for encoding ${utf8 ? "utf-8" : "utf-16"}`);
          const text = utf8 ? internal.decodeUtf8(pending, false, stripBom) : "\ufffd";
          if (text.length > 0) controller.enqueue(text);
        },
      });
    }
    get encoding() { return this.#encoding; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    get readable() { return this.#transform.readable; }
    get writable() { return this.#transform.writable; }
  }
  tagClass(TextDecoderStream, "TextDecoderStream");

  const FORMATS = ["gzip", "deflate", "deflate-raw"];

  function codecTransform(format, compress) {
    format = String(format);
    if (!FORMATS.includes(format)) {
      throw new TypeError(`The provided value '${format}' is not a valid enum value of type CompressionFormat.`);
    }
    const codec = internal.codec(format, compress);
    return new TransformStream({
      transform(chunk, controller) {
        for (const out of internal.codecWrite(codec, chunkBytes(chunk))) controller.enqueue(new Uint8Array(out));
      },
      flush(controller) {
        for (const out of internal.codecFinish(codec)) controller.enqueue(new Uint8Array(out));
      },
    });
  }

  class CompressionStream {
    #transform;
    constructor(format) { this.#transform = codecTransform(format, true); }
    get readable() { return this.#transform.readable; }
    get writable() { return this.#transform.writable; }
  }
  tagClass(CompressionStream, "CompressionStream");

  class DecompressionStream {
    #transform;
    constructor(format) { this.#transform = codecTransform(format, false); }
    get readable() { return this.#transform.readable; }
    get writable() { return this.#transform.writable; }
  }
  tagClass(DecompressionStream, "DecompressionStream");

  function isDisturbed(stream) {
    return stream._disturbed === true;
  }

  return {
    ReadableStream, ReadableStreamDefaultReader, ReadableStreamBYOBReader,
    ReadableStreamBYOBRequest, ReadableStreamDefaultController, ReadableByteStreamController,
    WritableStream, WritableStreamDefaultWriter, WritableStreamDefaultController,
    TransformStream, TransformStreamDefaultController, ByteLengthQueuingStrategy,
    CountQueuingStrategy, TextEncoderStream, TextDecoderStream, CompressionStream,
    DecompressionStream, isDisturbed,
  };
})
