// DOMException, Event, EventTarget, CustomEvent, ErrorEvent, PromiseRejectionEvent,
// AbortController and AbortSignal, as the DOM and WebIDL standards define them.
(function (internal) {
  "use strict";

  const LEGACY_CODES = {
    IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4,
    InvalidCharacterError: 5, NoModificationAllowedError: 7, NotFoundError: 8,
    NotSupportedError: 9, InUseAttributeError: 10, InvalidStateError: 11, SyntaxError: 12,
    InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
    TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20,
    URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23,
    InvalidNodeTypeError: 24, DataCloneError: 25,
  };
  const CONSTANTS = {
    INDEX_SIZE_ERR: 1, DOMSTRING_SIZE_ERR: 2, HIERARCHY_REQUEST_ERR: 3,
    WRONG_DOCUMENT_ERR: 4, INVALID_CHARACTER_ERR: 5, NO_DATA_ALLOWED_ERR: 6,
    NO_MODIFICATION_ALLOWED_ERR: 7, NOT_FOUND_ERR: 8, NOT_SUPPORTED_ERR: 9,
    INUSE_ATTRIBUTE_ERR: 10, INVALID_STATE_ERR: 11, SYNTAX_ERR: 12,
    INVALID_MODIFICATION_ERR: 13, NAMESPACE_ERR: 14, INVALID_ACCESS_ERR: 15,
    VALIDATION_ERR: 16, TYPE_MISMATCH_ERR: 17, SECURITY_ERR: 18, NETWORK_ERR: 19,
    ABORT_ERR: 20, URL_MISMATCH_ERR: 21, QUOTA_EXCEEDED_ERR: 22, TIMEOUT_ERR: 23,
    INVALID_NODE_TYPE_ERR: 24, DATA_CLONE_ERR: 25,
  };

  const exceptionData = new WeakMap();

  class DOMException extends Error {
    constructor(message = "", name = "Error") {
      super();
      delete this.message;
      exceptionData.set(this, { message: String(message), name: String(name) });
    }
    get name() { return data(this).name; }
    get message() { return data(this).message; }
    get code() { return LEGACY_CODES[data(this).name] ?? 0; }
  }
  function data(exception) {
    const found = exceptionData.get(exception);
    if (!found) throw new TypeError("Illegal invocation");
    return found;
  }
  for (const [key, value] of Object.entries(CONSTANTS)) {
    Object.defineProperty(DOMException, key, { value, enumerable: true });
    Object.defineProperty(DOMException.prototype, key, { value, enumerable: true });
  }
  Object.defineProperty(DOMException.prototype, Symbol.toStringTag, {
    value: "DOMException", configurable: true,
  });

  const NONE = 0, CAPTURING_PHASE = 1, AT_TARGET = 2, BUBBLING_PHASE = 3;
  const eventState = new WeakMap();

  function state(event) {
    const found = eventState.get(event);
    if (!found) throw new TypeError("Illegal invocation");
    return found;
  }

  class Event {
    constructor(type, init = undefined) {
      if (arguments.length === 0) {
        throw new TypeError('The "type" argument must be specified');
      }
      if (init !== undefined && init !== null && typeof init !== "object" && typeof init !== "function") {
        throw new TypeError("The \"options\" argument must be of type object.");
      }
      init = init ?? {};
      eventState.set(this, {
        type: String(type),
        bubbles: !!init.bubbles,
        cancelable: !!init.cancelable,
        composed: !!init.composed,
        target: null,
        currentTarget: null,
        phase: NONE,
        canceled: false,
        stop: false,
        stopImmediate: false,
        passive: false,
        dispatching: false,
        timeStamp: internal.now(),
      });
      Object.defineProperty(this, "isTrusted", { get: isTrusted, enumerable: true });
    }
    get type() { return state(this).type; }
    get target() { return state(this).target; }
    get srcElement() { return state(this).target; }
    get currentTarget() { return state(this).currentTarget; }
    get eventPhase() { return state(this).phase; }
    get bubbles() { return state(this).bubbles; }
    get cancelable() { return state(this).cancelable; }
    get composed() { return state(this).composed; }
    get defaultPrevented() { return state(this).canceled; }
    get timeStamp() { return state(this).timeStamp; }
    get returnValue() { return !state(this).canceled; }
    set returnValue(value) { if (!value) this.preventDefault(); }
    get cancelBubble() { return state(this).stop; }
    set cancelBubble(value) { if (value) state(this).stop = true; }
    composedPath() {
      const s = state(this);
      return s.dispatching && s.currentTarget ? [s.currentTarget] : [];
    }
    stopPropagation() { state(this).stop = true; }
    stopImmediatePropagation() { const s = state(this); s.stop = true; s.stopImmediate = true; }
    preventDefault() {
      const s = state(this);
      if (s.cancelable && !s.passive) s.canceled = true;
    }
    initEvent(type, bubbles = false, cancelable = false) {
      const s = state(this);
      if (s.dispatching) return;
      s.type = String(type);
      s.bubbles = !!bubbles;
      s.cancelable = !!cancelable;
    }
  }
  function isTrusted() { return false; }
  for (const [key, value] of Object.entries({ NONE, CAPTURING_PHASE, AT_TARGET, BUBBLING_PHASE })) {
    Object.defineProperty(Event, key, { value, enumerable: true });
    Object.defineProperty(Event.prototype, key, { value, enumerable: true });
  }
  Object.defineProperty(Event.prototype, Symbol.toStringTag, { value: "Event", configurable: true });

  class CustomEvent extends Event {
    #detail;
    constructor(type, init = undefined) {
      super(type, init);
      this.#detail = init?.detail ?? null;
    }
    get detail() { return this.#detail; }
  }
  Object.defineProperty(CustomEvent.prototype, Symbol.toStringTag, { value: "CustomEvent", configurable: true });

  class ErrorEvent extends Event {
    #init;
    constructor(type, init = undefined) {
      super(type, init);
      this.#init = init ?? {};
    }
    get message() { return String(this.#init.message ?? ""); }
    get filename() { return String(this.#init.filename ?? ""); }
    get lineno() { return Number(this.#init.lineno ?? 0) >>> 0; }
    get colno() { return Number(this.#init.colno ?? 0) >>> 0; }
    get error() { return this.#init.error; }
  }
  Object.defineProperty(ErrorEvent.prototype, Symbol.toStringTag, { value: "ErrorEvent", configurable: true });

  class PromiseRejectionEvent extends Event {
    #promise;
    #reason;
    constructor(type, init) {
      if (init === undefined || init === null || !("promise" in init)) {
        throw new TypeError("PromiseRejectionEvent requires init.promise");
      }
      super(type, init);
      this.#promise = init.promise;
      this.#reason = init.reason;
    }
    get promise() { return this.#promise; }
    get reason() { return this.#reason; }
  }
  Object.defineProperty(PromiseRejectionEvent.prototype, Symbol.toStringTag, { value: "PromiseRejectionEvent", configurable: true });

  const listenersOf = new WeakMap();

  function flatten(options) {
    if (typeof options === "boolean") return { capture: options };
    if (options === undefined || options === null) return { capture: false };
    return {
      capture: !!options.capture,
      once: !!options.once,
      passive: options.passive === undefined ? undefined : !!options.passive,
      signal: options.signal,
      hasSignal: "signal" in Object(options),
    };
  }

  function listeners(target) {
    let found = listenersOf.get(target);
    if (!found) {
      if (!(target instanceof Object)) throw new TypeError("Illegal invocation");
      found = new Map();
      listenersOf.set(target, found);
    }
    return found;
  }

  class EventTarget {
    constructor() { listenersOf.set(this, new Map()); }
    addEventListener(type, callback, options = undefined) {
      if (arguments.length < 2) throw new TypeError('The "listener" argument must be specified');
      const flat = flatten(options);
      if (flat.hasSignal && !(flat.signal instanceof AbortSignal)) {
        throw new TypeError('The "options.signal" property must be an instance of AbortSignal');
      }
      if (callback === null || callback === undefined) return;
      if (typeof callback !== "function" && (typeof callback !== "object")) {
        throw new TypeError('The "listener" argument must be an instance of EventListener');
      }
      if (flat.signal?.aborted) return;
      type = String(type);
      const byType = listeners(this);
      let list = byType.get(type);
      if (!list) { list = []; byType.set(type, list); }
      if (list.some((l) => l.callback === callback && l.capture === flat.capture)) return;
      const listener = {
        callback, capture: flat.capture, once: !!flat.once,
        passive: flat.passive ?? false, removed: false,
      };
      list.push(listener);
      if (flat.signal) {
        flat.signal.addEventListener("abort", () => {
          this.removeEventListener(type, callback, { capture: flat.capture });
        }, { once: true });
      }
    }
    removeEventListener(type, callback, options = undefined) {
      if (arguments.length < 2) throw new TypeError('The "listener" argument must be specified');
      const capture = flatten(options).capture;
      const list = listeners(this).get(String(type));
      if (!list) return;
      const index = list.findIndex((l) => l.callback === callback && l.capture === capture);
      if (index >= 0) {
        list[index].removed = true;
        list.splice(index, 1);
      }
    }
    dispatchEvent(event) {
      if (!(event instanceof Event)) {
        throw new TypeError('The "event" argument must be an instance of Event');
      }
      const s = state(event);
      if (s.dispatching) {
        throw new DOMException("The event is already being dispatched.", "InvalidStateError");
      }
      s.dispatching = true;
      s.target = this;
      s.currentTarget = this;
      s.phase = AT_TARGET;
      const list = listeners(this).get(s.type);
      if (list) {
        for (const listener of list.slice()) {
          if (listener.removed) continue;
          if (listener.once) this.removeEventListener(s.type, listener.callback, { capture: listener.capture });
          s.passive = listener.passive;
          try {
            if (typeof listener.callback === "function") {
              listener.callback.call(this, event);
            } else if (typeof listener.callback.handleEvent === "function") {
              listener.callback.handleEvent(event);
            }
          } catch (error) {
            internal.reportError(error);
          }
          s.passive = false;
          if (s.stopImmediate) break;
        }
      }
      s.dispatching = false;
      s.currentTarget = null;
      s.phase = NONE;
      s.stop = false;
      s.stopImmediate = false;
      return !s.canceled;
    }
  }
  Object.defineProperty(EventTarget.prototype, Symbol.toStringTag, { value: "EventTarget", configurable: true });

  // `onabort`-style attributes: one listener slot per target and event type.
  function defineHandlerAttribute(prototype, type) {
    const handlers = new WeakMap();
    Object.defineProperty(prototype, "on" + type, {
      get() { return handlers.get(this)?.value ?? null; },
      set(value) {
        let slot = handlers.get(this);
        if (!slot) {
          slot = { value: null };
          handlers.set(this, slot);
          this.addEventListener(type, (event) => {
            if (typeof slot.value === "function") return slot.value.call(this, event);
          });
        }
        slot.value = typeof value === "function" ? value : null;
      },
      enumerable: true,
      configurable: true,
    });
  }

  const ILLEGAL = Symbol("internal");
  const signalState = new WeakMap();

  function signalOf(signal) {
    const found = signalState.get(signal);
    if (!found) throw new TypeError("Illegal invocation");
    return found;
  }

  function abortError() {
    return new DOMException("This operation was aborted", "AbortError");
  }

  function signalAbort(signal, reason) {
    const s = signalOf(signal);
    if (s.aborted) return;
    s.aborted = true;
    s.reason = reason === undefined ? abortError() : reason;
    const dependents = s.dependents;
    s.dependents = [];
    for (const algorithm of s.algorithms.splice(0)) {
      try { algorithm(s.reason); } catch (error) { internal.reportError(error); }
    }
    signal.dispatchEvent(new Event("abort"));
    for (const dependent of dependents) signalAbort(dependent, s.reason);
  }

  class AbortSignal extends EventTarget {
    constructor(key = undefined) {
      if (key !== ILLEGAL) throw new TypeError("Illegal constructor");
      super();
      signalState.set(this, { aborted: false, reason: undefined, algorithms: [], dependents: [] });
    }
    get aborted() { return signalOf(this).aborted; }
    get reason() { return signalOf(this).reason; }
    throwIfAborted() {
      const s = signalOf(this);
      if (s.aborted) throw s.reason;
    }
    static abort(reason = undefined) {
      const signal = new AbortSignal(ILLEGAL);
      const s = signalOf(signal);
      s.aborted = true;
      s.reason = reason === undefined ? abortError() : reason;
      return signal;
    }
    static timeout(milliseconds) {
      const ms = Number(milliseconds);
      if (!Number.isFinite(ms) || ms < 0 || ms > Number.MAX_SAFE_INTEGER) {
        throw new TypeError('The "delay" argument must be a finite non-negative number');
      }
      const signal = new AbortSignal(ILLEGAL);
      setTimeout(() => {
        signalAbort(signal, new DOMException("The operation was aborted due to timeout", "TimeoutError"));
      }, Math.floor(ms));
      return signal;
    }
    static any(signals) {
      const list = Array.from(signals, (signal) => {
        if (!(signal instanceof AbortSignal)) {
          throw new TypeError('The "signals" argument must be an iterable of AbortSignal');
        }
        return signal;
      });
      const result = new AbortSignal(ILLEGAL);
      for (const signal of list) {
        if (signal.aborted) {
          const s = signalOf(result);
          s.aborted = true;
          s.reason = signal.reason;
          return result;
        }
      }
      // Each source holds its dependent until it aborts (then the list is dropped), so a signal
      // from \`any\` stays alive, and aborts, as long as one of its sources can.
      for (const signal of list) signalOf(signal).dependents.push(result);
      return result;
    }
  }
  defineHandlerAttribute(AbortSignal.prototype, "abort");
  Object.defineProperty(AbortSignal.prototype, Symbol.toStringTag, { value: "AbortSignal", configurable: true });

  class AbortController {
    #signal = new AbortSignal(ILLEGAL);
    get signal() { return this.#signal; }
    abort(reason = undefined) { signalAbort(this.#signal, reason); }
  }
  Object.defineProperty(AbortController.prototype, Symbol.toStringTag, { value: "AbortController", configurable: true });

  /// Runs `algorithm(reason)` when `signal` aborts (before its abort event); returns a remover.
  function onAbort(signal, algorithm) {
    const s = signalOf(signal);
    s.algorithms.push(algorithm);
    return () => {
      const index = s.algorithms.indexOf(algorithm);
      if (index >= 0) s.algorithms.splice(index, 1);
    };
  }

  return {
    DOMException, Event, EventTarget, CustomEvent, ErrorEvent, PromiseRejectionEvent,
    AbortController, AbortSignal, onAbort,
  };
})
