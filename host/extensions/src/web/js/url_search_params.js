// URLSearchParams (WHATWG URL standard) over the `url` crate's application/x-www-form-urlencoded
// parser and serializer, and `URL.prototype.searchParams` kept in step with the URL.
(function (internal) {
  "use strict";

  const listOf = new WeakMap();
  const urlOf = new WeakMap();

  function list(params) {
    const found = listOf.get(params);
    if (!found) throw new TypeError("Illegal invocation");
    return found;
  }

  function usv(value) {
    return internal.toUSVString(String(value));
  }

  function update(params) {
    const url = urlOf.get(params);
    if (url === undefined) return;
    const query = internal.serializeUrlencoded(list(params));
    setSearchQuietly(url, query === "" ? "" : "?" + query, query === "");
  }

  class URLSearchParams {
    constructor(init = "") {
      const pairs = [];
      listOf.set(this, pairs);
      if (init instanceof URLSearchParams) {
        for (const [name, value] of list(init)) pairs.push([name, value]);
      } else if (init !== null && (typeof init === "object" || typeof init === "function")) {
        const iteratorMethod = init[Symbol.iterator];
        if (iteratorMethod !== undefined && iteratorMethod !== null) {
          if (typeof iteratorMethod !== "function") throw new TypeError("Query pairs must be iterable");
          for (const pair of init) {
            if (pair === null || (typeof pair !== "object" && typeof pair !== "function")) {
              throw new TypeError("Each query pair must be an iterable [name, value] tuple");
            }
            const items = Array.from(pair);
            if (items.length !== 2) {
              throw new TypeError("Each query pair must be an iterable [name, value] tuple");
            }
            pairs.push([usv(items[0]), usv(items[1])]);
          }
        } else {
          for (const key of Reflect.ownKeys(init)) {
            const descriptor = Reflect.getOwnPropertyDescriptor(init, key);
            if (descriptor === undefined || !descriptor.enumerable) continue;
            if (typeof key === "symbol") throw new TypeError("Cannot convert a Symbol value to a string");
            pairs.push([usv(key), usv(init[key])]);
          }
        }
      } else {
        let text = usv(init);
        if (text.startsWith("?")) text = text.slice(1);
        for (const pair of internal.parseUrlencoded(text)) pairs.push(pair);
      }
    }
    get size() { return list(this).length; }
    append(name, value) {
      if (arguments.length < 2) throw new TypeError("URLSearchParams.append needs a name and a value");
      list(this).push([usv(name), usv(value)]);
      update(this);
    }
    delete(name, value = undefined) {
      if (arguments.length < 1) throw new TypeError("URLSearchParams.delete needs a name");
      const pairs = list(this);
      name = usv(name);
      const match = value === undefined ? (p) => p[0] === name : ((v) => (p) => p[0] === name && p[1] === v)(usv(value));
      for (let i = pairs.length - 1; i >= 0; i--) if (match(pairs[i])) pairs.splice(i, 1);
      update(this);
    }
    get(name) {
      if (arguments.length < 1) throw new TypeError("URLSearchParams.get needs a name");
      name = usv(name);
      const pair = list(this).find((p) => p[0] === name);
      return pair === undefined ? null : pair[1];
    }
    getAll(name) {
      if (arguments.length < 1) throw new TypeError("URLSearchParams.getAll needs a name");
      name = usv(name);
      return list(this).filter((p) => p[0] === name).map((p) => p[1]);
    }
    has(name, value = undefined) {
      if (arguments.length < 1) throw new TypeError("URLSearchParams.has needs a name");
      name = usv(name);
      if (value === undefined) return list(this).some((p) => p[0] === name);
      value = usv(value);
      return list(this).some((p) => p[0] === name && p[1] === value);
    }
    set(name, value) {
      if (arguments.length < 2) throw new TypeError("URLSearchParams.set needs a name and a value");
      const pairs = list(this);
      name = usv(name);
      value = usv(value);
      const first = pairs.findIndex((p) => p[0] === name);
      if (first < 0) {
        pairs.push([name, value]);
      } else {
        pairs[first][1] = value;
        for (let i = pairs.length - 1; i > first; i--) if (pairs[i][0] === name) pairs.splice(i, 1);
      }
      update(this);
    }
    sort() {
      const pairs = list(this);
      // Stable, by code units of the name (Array.prototype.sort is stable).
      pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      update(this);
    }
    forEach(callback, thisArg = undefined) {
      if (typeof callback !== "function") throw new TypeError("The callback must be a function");
      const pairs = list(this);
      for (let i = 0; i < pairs.length; i++) callback.call(thisArg, pairs[i][1], pairs[i][0], this);
    }
    keys() { return iterate(this, (p) => p[0]); }
    values() { return iterate(this, (p) => p[1]); }
    entries() { return iterate(this, (p) => [p[0], p[1]]); }
    toString() { return internal.serializeUrlencoded(list(this)); }
  }
  URLSearchParams.prototype[Symbol.iterator] = URLSearchParams.prototype.entries;
  Object.defineProperty(URLSearchParams.prototype, Symbol.iterator, { enumerable: false });
  Object.defineProperty(URLSearchParams.prototype, Symbol.toStringTag, {
    value: "URLSearchParams", configurable: true,
  });

  const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
  const iteratorState = new WeakMap();
  const URLSearchParamsIteratorPrototype = Object.create(IteratorPrototype, {
    next: {
      value: function next() {
        const s = iteratorState.get(this);
        if (s === undefined) throw new TypeError("Illegal invocation");
        const pairs = list(s.params);
        if (s.index >= pairs.length) return { value: undefined, done: true };
        return { value: s.project(pairs[s.index++]), done: false };
      },
      writable: true, configurable: true,
    },
    [Symbol.toStringTag]: { value: "URLSearchParams Iterator", configurable: true },
  });
  function iterate(params, project) {
    list(params);
    const iterator = Object.create(URLSearchParamsIteratorPrototype);
    iteratorState.set(iterator, { params, project, index: 0 });
    return iterator;
  }

  // URL.prototype.searchParams: one URLSearchParams per URL object, updated when `search` or
  // `href` change (the host's setters call `refresh`), and writing back into the URL when it
  // changes. The built-in URL accessors are reached through `internal`.
  const paramsOf = new WeakMap();
  const searchGet = internal.urlSearchGet;
  const searchSet = internal.urlSearchSet;
  const hrefGet = internal.urlHrefGet;
  const hrefSet = internal.urlHrefSet;
  let quiet = false;

  function setSearchQuietly(url, search, empty) {
    quiet = true;
    try {
      searchSet.call(url, search);
      if (empty) {
        // Setting "" leaves no `?`, as the standard's "update steps" do for an empty list.
        const href = hrefGet.call(url);
        const hash = href.indexOf("#");
        const base = hash < 0 ? href : href.slice(0, hash);
        if (base.endsWith("?")) {
          hrefSet.call(url, base.slice(0, -1) + (hash < 0 ? "" : href.slice(hash)));
        }
      }
    } finally {
      quiet = false;
    }
  }

  /// After `url`'s search or href changed: its URLSearchParams, if any, parse the new query.
  function refresh(url) {
    const params = paramsOf.get(url);
    if (params === undefined || quiet) return;
    const search = searchGet.call(url);
    const pairs = list(params);
    pairs.length = 0;
    for (const pair of internal.parseUrlencoded(search.startsWith("?") ? search.slice(1) : search)) {
      pairs.push(pair);
    }
  }

  /// `url.searchParams`: made on first use, then the same object.
  function paramsFor(url) {
    let params = paramsOf.get(url);
    if (params === undefined) {
      params = new URLSearchParams();
      paramsOf.set(url, params);
      urlOf.set(params, url);
      refresh(url);
    }
    return params;
  }

  return { URLSearchParams, paramsFor, refresh };
})
