// Two ECMAScript/HTML pieces Boa 0.22 lacks or shapes differently from Node, for extensions:
// `Array.fromAsync` (ES2024; Boa has it only behind its experimental feature) and
// `structuredClone`'s failure as a `DOMException` named "DataCloneError" (Boa's runtime throws a
// plain error).
(function () {
  "use strict";

  if (typeof Array.fromAsync !== "function") {
    const fromAsync = async function fromAsync(items, mapfn = undefined, thisArg = undefined) {
      if (mapfn !== undefined && typeof mapfn !== "function") {
        throw new TypeError(`${String(mapfn)} is not a function`);
      }
      if (items === null || items === undefined) {
        throw new TypeError(`${items} is not iterable`);
      }
      const C = typeof this === "function" && this !== Array ? this : null;
      const out = C ? new C() : [];
      let index = 0;
      const push = async (value) => {
        const mapped = mapfn ? await mapfn.call(thisArg, value, index) : value;
        if (C) {
          Object.defineProperty(out, index, { value: mapped, writable: true, enumerable: true, configurable: true });
        } else {
          out.push(mapped);
        }
        index += 1;
      };
      if (items[Symbol.asyncIterator] != null) {
        for await (const value of items) await push(value);
      } else if (items[Symbol.iterator] != null) {
        for (const value of items) await push(await value);
      } else {
        const object = Object(items);
        const length = Math.min(Math.max(Math.trunc(Number(object.length)) || 0, 0), Number.MAX_SAFE_INTEGER);
        for (let k = 0; k < length; k += 1) await push(await object[k]);
      }
      if (C) out.length = index;
      return out;
    };
    Object.defineProperty(fromAsync, "length", { value: 1 });
    Object.defineProperty(Array, "fromAsync", { value: fromAsync, writable: true, enumerable: false, configurable: true });
  }

  const clone = globalThis.structuredClone;
  if (typeof clone === "function") {
    const shown = (value) => {
      if (typeof value === "function") return String(value);
      if (typeof value === "symbol") return value.toString();
      return "#<Object>";
    };
    // Kinds Boa's clone turns into `{}` where the HTML standard (and Node) refuse them.
    const refused = [globalThis.WeakMap, globalThis.WeakSet, globalThis.WeakRef,
      globalThis.FinalizationRegistry, globalThis.Promise].filter((type) => typeof type === "function");
    const refuseUncloneable = (root) => {
      const seen = new Set();
      const pending = [root];
      while (pending.length > 0) {
        const value = pending.pop();
        // Node names the value that cannot be cloned, wherever it is.
        if (typeof value === "function" || typeof value === "symbol") {
          throw new DOMException(`${shown(value)} could not be cloned.`, "DataCloneError");
        }
        if (value === null || typeof value !== "object" || seen.has(value)) continue;
        seen.add(value);
        for (const type of refused) {
          if (value instanceof type) throw new DOMException(`#<${type.name}> could not be cloned.`, "DataCloneError");
        }
        if (value instanceof Map) {
          for (const [key, item] of value) pending.push(key, item);
        } else if (value instanceof Set) {
          for (const item of value) pending.push(item);
        } else if (!ArrayBuffer.isView(value) && !(value instanceof ArrayBuffer)) {
          for (const key of Object.keys(value)) pending.push(value[key]);
        }
      }
    };
    const structuredClone = function structuredClone(value, options = undefined) {
      if (arguments.length < 1) throw new TypeError('The "value" argument must be specified');
      refuseUncloneable(value);
      try {
        return clone(value, options);
      } catch (error) {
        if (error instanceof DOMException || !(error instanceof Error) || error instanceof RangeError) throw error;
        throw new DOMException(`${shown(value)} could not be cloned.`, "DataCloneError");
      }
    };
    Object.defineProperty(globalThis, "structuredClone", { value: structuredClone, writable: true, enumerable: true, configurable: true });
  }
})();
