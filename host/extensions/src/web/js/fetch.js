// fetch, Headers, Request and Response (WHATWG Fetch standard). Requests go through the host's
// HTTP client (internal.fetchStart: on the session's tokio runtime, responses capped in size);
// bodies are strings, bytes, Blob, FormData, URLSearchParams or ReadableStream, and a response's
// `body` is a ReadableStream.
(function (internal) {
  "use strict";

  const { AbortController: AbortControllerClass, AbortSignal, onAbort } = internal.load("events");
  const blobs = internal.load("blob");
  const { Blob, FormData } = blobs;
  const { URLSearchParams } = internal.load("url");
  const encoder = new TextEncoder();

  function streams() { return internal.load("streams"); }

  // ---- Headers -------------------------------------------------------------------------

  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const headerState = new WeakMap();

  function headerList(headers) {
    const found = headerState.get(headers);
    if (!found) throw new TypeError("Illegal invocation");
    return found;
  }
  function checkName(name) {
    name = String(name);
    if (!TOKEN.test(name)) throw new TypeError(`Header name must be a valid HTTP token ["${name}"]`);
    return name.toLowerCase();
  }
  function checkValue(value) {
    value = String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
    if (/[\0\r\n]/.test(value) || /[^\x00-\xff]/.test(value)) {
      throw new TypeError(`Invalid header value "${value}"`);
    }
    return value;
  }
  function writable(headers) {
    const s = headerList(headers);
    if (s.immutable) throw new TypeError("immutable");
    return s;
  }
  function fill(headers, init) {
    if (init === undefined || init === null) return;
    if (typeof init !== "object" && typeof init !== "function") {
      throw new TypeError("The provided value is not of type '(record<ByteString, ByteString> or sequence<sequence<ByteString>>)'.");
    }
    if (init instanceof Headers) {
      for (const [name, value] of headerList(init).list) headerList(headers).list.push([name, value]);
      return;
    }
    if (typeof init[Symbol.iterator] === "function") {
      for (const pair of init) {
        const items = Array.from(pair);
        if (items.length !== 2) throw new TypeError("Header pairs must contain exactly two items");
        headers.append(items[0], items[1]);
      }
      return;
    }
    for (const key of Reflect.ownKeys(init)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(init, key);
      if (descriptor === undefined || !descriptor.enumerable) continue;
      headers.append(key, init[key]);
    }
  }

  class Headers {
    constructor(init = undefined) {
      headerState.set(this, { list: [], immutable: false });
      fill(this, init);
    }
    append(name, value) {
      const s = writable(this);
      s.list.push([checkName(name), checkValue(value)]);
    }
    delete(name) {
      const s = writable(this);
      name = checkName(name);
      s.list = s.list.filter((entry) => entry[0] !== name);
    }
    get(name) {
      name = checkName(name);
      const values = headerList(this).list.filter((e) => e[0] === name).map((e) => e[1]);
      return values.length === 0 ? null : values.join(", ");
    }
    getSetCookie() {
      return headerList(this).list.filter((e) => e[0] === "set-cookie").map((e) => e[1]);
    }
    has(name) {
      name = checkName(name);
      return headerList(this).list.some((e) => e[0] === name);
    }
    set(name, value) {
      const s = writable(this);
      name = checkName(name);
      value = checkValue(value);
      const first = s.list.findIndex((e) => e[0] === name);
      if (first < 0) {
        s.list.push([name, value]);
        return;
      }
      s.list[first] = [name, value];
      s.list = s.list.filter((e, i) => i <= first || e[0] !== name);
    }
    forEach(callback, thisArg = undefined) {
      if (typeof callback !== "function") throw new TypeError("The callback must be a function");
      for (const [name, value] of sorted(this)) callback.call(thisArg, value, name, this);
    }
    *entries() { yield* sorted(this); }
    *keys() { for (const [name] of sorted(this)) yield name; }
    *values() { for (const [, value] of sorted(this)) yield value; }
  }
  Headers.prototype[Symbol.iterator] = Headers.prototype.entries;
  Object.defineProperty(Headers.prototype, Symbol.iterator, { enumerable: false });
  Object.defineProperty(Headers.prototype, Symbol.toStringTag, { value: "Headers", configurable: true });

  /// The "sort and combine" list: names sorted, values joined, each set-cookie on its own.
  function sorted(headers) {
    const list = headerList(headers).list;
    const names = [...new Set(list.map((e) => e[0]))].sort();
    const out = [];
    for (const name of names) {
      if (name === "set-cookie") {
        for (const e of list) if (e[0] === name) out.push([name, e[1]]);
      } else {
        out.push([name, list.filter((e) => e[0] === name).map((e) => e[1]).join(", ")]);
      }
    }
    return out;
  }
  function headersFrom(pairs, immutable) {
    const headers = new Headers();
    const s = headerList(headers);
    for (const [name, value] of pairs) s.list.push([String(name).toLowerCase(), String(value)]);
    s.immutable = immutable;
    return headers;
  }

  // ---- Bodies --------------------------------------------------------------------------

  /// The "extract a body" steps: { bytes | stream, type }.
  function extractBody(value) {
    if (typeof value === "string") return { bytes: encoder.encode(value), type: "text/plain;charset=UTF-8" };
    if (value instanceof URLSearchParams) {
      return { bytes: encoder.encode(value.toString()), type: "application/x-www-form-urlencoded;charset=UTF-8" };
    }
    if (value instanceof Blob) return { bytes: blobs.blobBytes(value), type: value.type || null };
    if (value instanceof FormData) return blobs.encodeMultipart(value);
    const buffer = blobs.bufferSourceBytes(value);
    if (buffer !== undefined) return { bytes: buffer, type: null };
    const { ReadableStream } = streams();
    if (value instanceof ReadableStream) {
      if (value.locked) throw new TypeError("The body stream is locked");
      return { stream: value, type: null };
    }
    return { bytes: encoder.encode(String(value)), type: "text/plain;charset=UTF-8" };
  }

  const bodyState = new WeakMap();

  function body(object) {
    const found = bodyState.get(object);
    if (!found) throw new TypeError("Illegal invocation");
    return found;
  }

  function streamOf(s) {
    if (s.stream === null && s.bytes !== null) {
      const bytes = s.bytes;
      s.stream = new (streams().ReadableStream)({
        type: "bytes",
        start(controller) {
          if (bytes.byteLength > 0) controller.enqueue(bytes.slice());
          controller.close();
        },
      });
    }
    return s.stream;
  }

  /// A body that was read, or whose stream is locked or was read from, cannot be read again.
  function unusable(s) {
    return s.used || (s.stream !== null && (s.stream.locked || streams().isDisturbed(s.stream)));
  }

  async function consume(object) {
    const s = body(object);
    if (unusable(s)) {
      throw new TypeError("Body is unusable: Body has already been read");
    }
    s.used = true;
    if (s.stream === null) return s.bytes === null ? new Uint8Array(0) : s.bytes.slice();
    const reader = s.stream.getReader();
    const chunks = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!(value instanceof Uint8Array)) {
        throw new TypeError("Received non-Uint8Array chunk");
      }
      chunks.push(value);
    }
    return blobs.concat(chunks);
  }

  function mimeType(object) {
    return object.headers.get("content-type");
  }

  const BodyMixin = {
    get body() {
      const s = body(this);
      return s.bytes === null && s.stream === null ? null : streamOf(s);
    },
    get bodyUsed() {
      const s = body(this);
      return s.used || (s.stream !== null && streams().isDisturbed(s.stream));
    },
    async arrayBuffer() { return (await consume(this)).buffer; },
    async bytes() { return consume(this); },
    async text() { return new TextDecoder().decode(await consume(this)); },
    async json() { return JSON.parse(new TextDecoder().decode(await consume(this))); },
    async blob() {
      const bytes = await consume(this);
      return blobs.blobFromBytes(bytes, mimeType(this) ?? "");
    },
    async formData() {
      const bytes = await consume(this);
      return blobs.decodeFormData(bytes, mimeType(this));
    },
  };
  function mixBody(prototype) {
    for (const key of Object.keys(BodyMixin)) {
      Object.defineProperty(prototype, key, Object.getOwnPropertyDescriptor(BodyMixin, key));
    }
  }

  function setBody(object, extracted, headers) {
    const s = { bytes: null, stream: null, used: false };
    if (extracted !== null) {
      if (extracted.stream !== undefined) s.stream = extracted.stream;
      else s.bytes = extracted.bytes;
      if (extracted.type !== null && !headers.has("content-type")) {
        headerList(headers).list.push(["content-type", extracted.type]);
      }
    }
    bodyState.set(object, s);
  }

  function cloneBody(from, to) {
    const s = body(from);
    if (s.used) throw new TypeError("Response.clone: Body has already been consumed.");
    const copy = { bytes: s.bytes, stream: null, used: false };
    if (s.stream !== null) {
      const [one, two] = s.stream.tee();
      s.stream = one;
      copy.stream = two;
    }
    bodyState.set(to, copy);
  }

  // ---- Request -------------------------------------------------------------------------

  function hasBody(object) {
    const s = body(object);
    return s.bytes !== null || s.stream !== null;
  }

  const NORMALISED = new Set(["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]);
  const requestState = new WeakMap();

  function request(object) {
    const found = requestState.get(object);
    if (!found) throw new TypeError("Illegal invocation");
    return found;
  }

  function parseUrl(input) {
    try {
      return new internal.URL(String(input)).href;
    } catch {
      throw new TypeError(`Failed to parse URL from ${String(input)}`);
    }
  }

  class Request {
    constructor(input, init = undefined) {
      if (arguments.length < 1) throw new TypeError("Request needs a URL or a Request");
      init = init ?? {};
      let from = null;
      let url;
      if (input instanceof Request) {
        from = request(input);
        url = from.url;
      } else {
        url = parseUrl(input);
        const parsed = new internal.URL(url);
        if (parsed.username !== "" || parsed.password !== "") {
          throw new TypeError(`Request cannot be constructed from a URL that includes credentials: ${url}`);
        }
      }
      let method = from?.method ?? "GET";
      if (init.method !== undefined) {
        method = String(init.method);
        if (!TOKEN.test(method)) throw new TypeError(`'${method}' is not a valid HTTP method.`);
        const upper = method.toUpperCase();
        if (upper === "CONNECT" || upper === "TRACE" || upper === "TRACK") {
          throw new TypeError(`'${method}' HTTP method is unsupported.`);
        }
        if (NORMALISED.has(upper)) method = upper;
      }
      let signal = from?.signal ?? null;
      if (init.signal !== undefined && init.signal !== null) {
        if (!(init.signal instanceof AbortSignal)) {
          throw new TypeError("Failed to construct 'Request': member signal is not of type AbortSignal.");
        }
        signal = init.signal;
      }
      const headers = new Headers(init.headers !== undefined ? init.headers : (input instanceof Request ? input.headers : undefined));
      let extracted = null;
      if (init.body !== undefined && init.body !== null) {
        if (method === "GET" || method === "HEAD") {
          throw new TypeError("Request with GET/HEAD method cannot have body.");
        }
        extracted = extractBody(init.body);
        if (extracted.stream !== undefined && init.duplex !== "half") {
          throw new TypeError("RequestInit: duplex option is required when sending a body.");
        }
      }
      const redirect = String(init.redirect ?? from?.redirect ?? "follow");
      if (redirect !== "follow" && redirect !== "error" && redirect !== "manual") {
        throw new TypeError(`The provided value '${redirect}' is not a valid enum value of type RequestRedirect.`);
      }
      // The request's own signal follows `signal`; the follower is removed when a fetch of this
      // request settles (a long-lived signal does not collect one per request).
      const controller = new AbortControllerClass();
      let unfollow = () => {};
      if (signal !== null) {
        if (signal.aborted) controller.abort(signal.reason);
        else unfollow = onAbort(signal, (reason) => controller.abort(reason));
      }
      requestState.set(this, { url, method, headers, signal: controller.signal, redirect, unfollow });
      if (extracted !== null) {
        setBody(this, extracted, headers);
      } else if (input instanceof Request && hasBody(input)) {
        if (method === "GET" || method === "HEAD") {
          throw new TypeError("Request with GET/HEAD method cannot have body.");
        }
        // The input's body moves to this request; the input is used up.
        const from = body(input);
        if (unusable(from)) {
          throw new TypeError("Cannot construct a Request with a Request object that has already been used.");
        }
        bodyState.set(this, { bytes: from.bytes, stream: from.stream, used: false });
        from.used = true;
      } else {
        setBody(this, null, headers);
      }
    }
    get method() { return request(this).method; }
    get url() { return request(this).url; }
    get headers() { return request(this).headers; }
    get signal() { return request(this).signal; }
    get redirect() { return request(this).redirect; }
    get destination() { return ""; }
    get referrer() { return "about:client"; }
    get mode() { return "cors"; }
    get credentials() { return "same-origin"; }
    get cache() { return "default"; }
    get keepalive() { return false; }
    get duplex() { return "half"; }
    clone() {
      const copy = Object.create(Request.prototype);
      const s = request(this);
      requestState.set(copy, { ...s, headers: new Headers(s.headers) });
      cloneBody(this, copy);
      return copy;
    }
  }
  mixBody(Request.prototype);
  Object.defineProperty(Request.prototype, Symbol.toStringTag, { value: "Request", configurable: true });

  // ---- Response ------------------------------------------------------------------------

  const NULL_BODY = new Set([101, 103, 204, 205, 304]);
  const REDIRECTS = new Set([301, 302, 303, 307, 308]);
  const responseState = new WeakMap();

  function response(object) {
    const found = responseState.get(object);
    if (!found) throw new TypeError("Illegal invocation");
    return found;
  }

  class Response {
    constructor(bodyInit = null, init = undefined) {
      init = init ?? {};
      const status = init.status === undefined ? 200 : Number(init.status);
      if (!Number.isInteger(status) || status < 200 || status > 599) {
        throw new RangeError(`init["status"] must be in the range of 200 to 599, inclusive.`);
      }
      const statusText = init.statusText === undefined ? "" : String(init.statusText);
      if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(statusText)) throw new TypeError("Invalid statusText");
      const headers = new Headers(init.headers);
      let extracted = null;
      if (bodyInit !== null && bodyInit !== undefined) {
        if (NULL_BODY.has(status)) throw new TypeError("Response constructor: Invalid response status code " + status);
        extracted = extractBody(bodyInit);
      }
      responseState.set(this, { type: "default", url: "", status, statusText, headers, redirected: false });
      setBody(this, extracted, headers);
    }
    get type() { return response(this).type; }
    get url() { return response(this).url; }
    get redirected() { return response(this).redirected; }
    get status() { return response(this).status; }
    get ok() { const s = response(this).status; return s >= 200 && s <= 299; }
    get statusText() { return response(this).statusText; }
    get headers() { return response(this).headers; }
    clone() {
      const copy = Object.create(Response.prototype);
      const s = response(this);
      const headers = new Headers(s.headers);
      headerList(headers).immutable = headerList(s.headers).immutable;
      responseState.set(copy, { ...s, headers });
      cloneBody(this, copy);
      return copy;
    }
    static error() {
      const r = new Response(null, { status: 200 });
      Object.assign(response(r), { type: "error", status: 0, headers: headersFrom([], true) });
      return r;
    }
    static redirect(url, status = 302) {
      const href = parseUrl(url);
      status = Number(status);
      if (!REDIRECTS.has(status)) throw new RangeError(`Invalid status code ${status}`);
      const r = new Response(null, { status: 200 });
      Object.assign(response(r), { status, headers: headersFrom([["location", href]], true) });
      return r;
    }
    static json(data, init = undefined) {
      const text = JSON.stringify(data);
      if (text === undefined) throw new TypeError("Value is not JSON serializable");
      const headers = new Headers(init?.headers);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
      return new Response(text, { ...(init ?? {}), headers });
    }
  }
  mixBody(Response.prototype);
  Object.defineProperty(Response.prototype, Symbol.toStringTag, { value: "Response", configurable: true });

  // ---- fetch ---------------------------------------------------------------------------

  async function fetch(input, init = undefined) {
    // Where the extension called fetch: a failure's stack names that line, not this file.
    const site = new Error();
    const req = new Request(input, init);
    const s = request(req);
    // The request's signal keeps following the caller's while the response body streams.
    let streaming = false;
    try {
      return await send(req, s, () => { streaming = true; }, site);
    } finally {
      if (!streaming) s.unfollow();
    }
  }

  async function send(req, s, streams_body, site) {
    const signal = s.signal;
    if (signal.aborted) throw signal.reason;
    let bytes = null;
    const b = body(req);
    if (b.bytes !== null || b.stream !== null) bytes = await consume(req);
    if (signal.aborted) throw signal.reason;
    const headers = headerList(s.headers).list.map(([name, value]) => [name, value]);
    if (!s.headers.has("accept")) headers.push(["accept", "*/*"]);
    if (!s.headers.has("accept-language")) headers.push(["accept-language", "*"]);
    const handle = internal.fetchStart(s.method, s.url, headers, bytes, s.redirect);
    const answer = internal.fetchWait(handle);
    const raw = await new Promise((resolve, reject) => {
      const removeAbort = onAbort(signal, (reason) => {
        internal.fetchAbort(handle);
        reject(reason);
      });
      answer.then((value) => { removeAbort(); resolve(value); }, (error) => {
        removeAbort();
        const failure = new TypeError("fetch failed", { cause: error });
        failure.stack = site.stack;
        reject(failure);
      });
    });
    if (signal.aborted) {
      // Aborted between the head's arrival and here.
      internal.fetchAbort(handle);
      throw signal.reason;
    }
    const result = new Response(null, { status: 200 });
    Object.assign(response(result), {
      type: "basic",
      url: raw.url,
      status: raw.status,
      statusText: raw.statusText,
      headers: headersFrom(raw.headers, true),
      redirected: raw.url !== s.url,
    });
    if (NULL_BODY.has(raw.status) || s.method === "HEAD") {
      internal.fetchAbort(handle);
      return result;
    }
    streams_body();
    body(result).stream = bodyStream(handle, signal, s.unfollow);
    return result;
  }

  /// The body of a fetched response as it arrives: a byte stream pulling one chunk at a time
  /// from the host (which stops reading from the server while the stream is full); the request's
  /// signal errors it, and cancelling it ends the request.
  function bodyStream(handle, signal, unfollow) {
    let removeAbort = () => {};
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      removeAbort();
      unfollow();
    };
    const { ReadableStream } = streams();
    return new ReadableStream({
      type: "bytes",
      start(controller) {
        if (signal.aborted) {
          internal.fetchAbort(handle);
          finish();
          controller.error(signal.reason);
          return;
        }
        removeAbort = onAbort(signal, (reason) => {
          internal.fetchAbort(handle);
          finish();
          try { controller.error(reason); } catch {}
        });
      },
      async pull(controller) {
        let chunk;
        try {
          chunk = await internal.fetchRead(handle);
        } catch (error) {
          finish();
          throw new TypeError("terminated", { cause: error });
        }
        if (chunk === null) {
          finish();
          controller.close();
          controller.byobRequest?.respond(0);
        } else {
          controller.enqueue(new Uint8Array(chunk));
        }
      },
      cancel() {
        internal.fetchAbort(handle);
        finish();
      },
    });
  }

  return { fetch, Headers, Request, Response };
})
