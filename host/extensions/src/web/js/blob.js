// Blob, File (File API standard) and FormData (XHR standard), with the multipart/form-data
// encoding fetch uses for a FormData body and the parser behind Response.prototype.formData.
(function (internal) {
  "use strict";

  const encoder = new TextEncoder();
  const bytesOf = new WeakMap();
  const typeOf = new WeakMap();

  function blobBytes(blob) {
    const found = bytesOf.get(blob);
    if (!found) throw new TypeError("Illegal invocation");
    return found;
  }

  /// The bytes of a BufferSource (a copy), or undefined when `value` is not one.
  function bufferSourceBytes(value) {
    if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
    if (ArrayBuffer.isView(value)) {
      return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
    }
    return undefined;
  }

  function normaliseType(type) {
    const text = String(type);
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c > 0x7e) return "";
    }
    return text.toLowerCase();
  }

  function concat(chunks) {
    let length = 0;
    for (const chunk of chunks) length += chunk.byteLength;
    const out = new Uint8Array(length);
    let offset = 0;
    for (const chunk of chunks) { out.set(chunk, offset); offset += chunk.byteLength; }
    return out;
  }

  function convertLineEndings(text) {
    return text.replace(/\r\n|\r/g, "\n");
  }

  class Blob {
    constructor(parts = undefined, options = undefined) {
      if (options !== undefined && options !== null && typeof options !== "object" && typeof options !== "function") {
        throw new TypeError("The \"options\" argument must be of type object.");
      }
      const endings = options?.endings === undefined ? "transparent" : String(options.endings);
      if (endings !== "transparent" && endings !== "native") {
        throw new TypeError(`The provided value '${endings}' is not a valid enum value of type EndingType.`);
      }
      const chunks = [];
      if (parts !== undefined) {
        if (parts === null || typeof parts !== "object" || typeof parts[Symbol.iterator] !== "function") {
          throw new TypeError("The \"blobParts\" argument must be a sequence.");
        }
        for (const part of parts) {
          const buffer = bufferSourceBytes(part);
          if (buffer !== undefined) chunks.push(buffer);
          else if (part instanceof Blob) chunks.push(blobBytes(part));
          else {
            let text = internal.toUSVString(String(part));
            if (endings === "native") text = convertLineEndings(text);
            chunks.push(encoder.encode(text));
          }
        }
      }
      bytesOf.set(this, concat(chunks));
      typeOf.set(this, options?.type === undefined ? "" : normaliseType(options.type));
    }
    get size() { return blobBytes(this).byteLength; }
    get type() { blobBytes(this); return typeOf.get(this); }
    slice(start = undefined, end = undefined, contentType = undefined) {
      const bytes = blobBytes(this);
      const size = bytes.byteLength;
      const clamp = (value, fallback) => {
        if (value === undefined) return fallback;
        const n = Math.trunc(Number(value)) || 0;
        return n < 0 ? Math.max(size + n, 0) : Math.min(n, size);
      };
      const from = clamp(start, 0);
      const to = clamp(end, size);
      const blob = Object.create(Blob.prototype);
      bytesOf.set(blob, bytes.slice(from, Math.max(from, to)));
      typeOf.set(blob, contentType === undefined ? "" : normaliseType(contentType));
      return blob;
    }
    async text() { return new TextDecoder().decode(blobBytes(this)); }
    async arrayBuffer() { return blobBytes(this).slice().buffer; }
    async bytes() { return blobBytes(this).slice(); }
    stream() {
      const bytes = blobBytes(this);
      const { ReadableStream } = internal.load("streams");
      let offset = 0;
      return new ReadableStream({
        type: "bytes",
        pull(controller) {
          if (offset >= bytes.byteLength) {
            controller.close();
            return;
          }
          const end = Math.min(offset + 65536, bytes.byteLength);
          controller.enqueue(bytes.slice(offset, end));
          offset = end;
        },
      });
    }
  }
  Object.defineProperty(Blob.prototype, Symbol.toStringTag, { value: "Blob", configurable: true });

  class File extends Blob {
    #name;
    #lastModified;
    constructor(bits, name, options = undefined) {
      if (arguments.length < 2) {
        throw new TypeError('The "fileBits" and "fileName" arguments must be specified');
      }
      super(bits, options);
      this.#name = internal.toUSVString(String(name));
      this.#lastModified = options?.lastModified === undefined ? Date.now() : Number(options.lastModified);
    }
    get name() { return this.#name; }
    get lastModified() { return this.#lastModified; }
  }
  Object.defineProperty(File.prototype, Symbol.toStringTag, { value: "File", configurable: true });

  function blobFromBytes(bytes, type) {
    const blob = Object.create(Blob.prototype);
    bytesOf.set(blob, bytes);
    typeOf.set(blob, normaliseType(type));
    return blob;
  }

  const entriesOf = new WeakMap();
  function entries(formData) {
    const found = entriesOf.get(formData);
    if (!found) throw new TypeError("Illegal invocation");
    return found;
  }

  function entryValue(value, filename, argumentCount) {
    if (value instanceof Blob) {
      if (!(value instanceof File) || argumentCount > 2) {
        const name = argumentCount > 2 ? internal.toUSVString(String(filename)) : (value instanceof File ? value.name : "blob");
        return new File([value], name, {
          type: value.type,
          lastModified: value instanceof File ? value.lastModified : undefined,
        });
      }
      return value;
    }
    if (argumentCount > 2) {
      throw new TypeError("Failed to execute 'append' on 'FormData': parameter 2 is not of type 'Blob'.");
    }
    return internal.toUSVString(String(value));
  }

  class FormData {
    constructor(form = undefined) {
      if (form !== undefined) {
        throw new TypeError("The \"form\" argument must be undefined: there is no HTML form here");
      }
      entriesOf.set(this, []);
    }
    append(name, value, filename = undefined) {
      if (arguments.length < 2) throw new TypeError("FormData.append needs a name and a value");
      entries(this).push([internal.toUSVString(String(name)), entryValue(value, filename, arguments.length)]);
    }
    delete(name) {
      const list = entries(this);
      name = internal.toUSVString(String(name));
      for (let i = list.length - 1; i >= 0; i--) if (list[i][0] === name) list.splice(i, 1);
    }
    get(name) {
      name = internal.toUSVString(String(name));
      const entry = entries(this).find((e) => e[0] === name);
      return entry === undefined ? null : entry[1];
    }
    getAll(name) {
      name = internal.toUSVString(String(name));
      return entries(this).filter((e) => e[0] === name).map((e) => e[1]);
    }
    has(name) {
      name = internal.toUSVString(String(name));
      return entries(this).some((e) => e[0] === name);
    }
    set(name, value, filename = undefined) {
      if (arguments.length < 2) throw new TypeError("FormData.set needs a name and a value");
      const list = entries(this);
      name = internal.toUSVString(String(name));
      const entry = [name, entryValue(value, filename, arguments.length)];
      const first = list.findIndex((e) => e[0] === name);
      if (first < 0) {
        list.push(entry);
        return;
      }
      list[first] = entry;
      for (let i = list.length - 1; i > first; i--) if (list[i][0] === name) list.splice(i, 1);
    }
    forEach(callback, thisArg = undefined) {
      if (typeof callback !== "function") throw new TypeError("The callback must be a function");
      const list = entries(this);
      for (let i = 0; i < list.length; i++) callback.call(thisArg, list[i][1], list[i][0], this);
    }
    *entries() {
      const list = entries(this);
      for (let i = 0; i < list.length; i++) yield [list[i][0], list[i][1]];
    }
    *keys() { for (const [name] of this.entries()) yield name; }
    *values() { for (const [, value] of this.entries()) yield value; }
  }
  FormData.prototype[Symbol.iterator] = FormData.prototype.entries;
  Object.defineProperty(FormData.prototype, Symbol.iterator, { enumerable: false });
  Object.defineProperty(FormData.prototype, Symbol.toStringTag, { value: "FormData", configurable: true });

  function escapeName(name) {
    return name.replace(/\n/g, "%0A").replace(/\r/g, "%0D").replace(/"/g, "%22");
  }
  function normaliseBreaks(text) {
    return text.replace(/\r(?!\n)|(?<!\r)\n/g, "\r\n");
  }

  /// The multipart/form-data body of `formData`: { bytes, type }.
  function encodeMultipart(formData) {
    const boundary = "----formdata-earshot-" + internal.randomDigits(22);
    const chunks = [];
    for (const [name, value] of entries(formData)) {
      let head = `--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(normaliseBreaks(name))}"`;
      if (typeof value === "string") {
        chunks.push(encoder.encode(`${head}\r\n\r\n${normaliseBreaks(value)}\r\n`));
      } else {
        head += `; filename="${escapeName(value.name)}"\r\nContent-Type: ${value.type || "application/octet-stream"}\r\n\r\n`;
        chunks.push(encoder.encode(head), blobBytes(value), encoder.encode("\r\n"));
      }
    }
    chunks.push(encoder.encode(`--${boundary}--\r\n`));
    return { bytes: concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
  }

  const indexOfBytes = internal.indexOfBytes;

  /// A parameter of a header; in a quoted value the escapes of escapeName are undone.
  function parameter(header, key) {
    const quoted = new RegExp(`;\\s*${key}="([^"]*)"`, "i").exec(header);
    if (quoted !== null) {
      return quoted[1].replace(/%0A/gi, "\n").replace(/%0D/gi, "\r").replace(/%22/gi, '"');
    }
    const bare = new RegExp(`;\\s*${key}=([^;\\s]*)`, "i").exec(header);
    return bare === null ? undefined : bare[1];
  }

  /// A FormData from a body and its Content-Type (multipart/form-data or urlencoded).
  function decodeFormData(bytes, contentType) {
    const type = (contentType ?? "").toLowerCase();
    const formData = new FormData();
    if (type.startsWith("application/x-www-form-urlencoded")) {
      for (const [name, value] of internal.parseUrlencoded(new TextDecoder().decode(bytes))) {
        formData.append(name, value);
      }
      return formData;
    }
    if (!type.startsWith("multipart/form-data")) {
      throw new TypeError("Could not parse content as FormData.");
    }
    const boundary = parameter(contentType, "boundary");
    if (!boundary) throw new TypeError("Could not parse content as FormData: no boundary.");
    const delimiter = encoder.encode(`--${boundary}`);
    const decoder = new TextDecoder();
    let position = indexOfBytes(bytes, delimiter, 0);
    if (position < 0) throw new TypeError("Could not parse content as FormData.");
    for (;;) {
      position += delimiter.length;
      if (bytes[position] === 0x2d && bytes[position + 1] === 0x2d) break;
      position += 2; // CRLF
      const headerEnd = indexOfBytes(bytes, encoder.encode("\r\n\r\n"), position);
      if (headerEnd < 0) throw new TypeError("Could not parse content as FormData.");
      const headers = decoder.decode(bytes.subarray(position, headerEnd)).split("\r\n");
      const next = indexOfBytes(bytes, encoder.encode(`\r\n--${boundary}`), headerEnd + 4);
      if (next < 0) throw new TypeError("Could not parse content as FormData.");
      const body = bytes.slice(headerEnd + 4, next);
      let disposition = "";
      let partType = "";
      for (const header of headers) {
        const colon = header.indexOf(":");
        const key = header.slice(0, colon).trim().toLowerCase();
        const value = header.slice(colon + 1).trim();
        if (key === "content-disposition") disposition = value;
        if (key === "content-type") partType = value;
      }
      const name = parameter(disposition, "name");
      if (name === undefined) throw new TypeError("Could not parse content as FormData.");
      const filename = parameter(disposition, "filename");
      if (filename === undefined) {
        formData.append(name, decoder.decode(body));
      } else {
        formData.append(name, new File([body], filename, { type: partType }));
      }
      position = next + 2;
    }
    return formData;
  }

  return {
    Blob, File, FormData, blobBytes, blobFromBytes, bufferSourceBytes, concat,
    encodeMultipart, decodeFormData,
  };
})
