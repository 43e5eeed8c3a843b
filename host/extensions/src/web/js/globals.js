// `performance` (High Resolution Time), `navigator` (HTML's WorkerNavigator subset a server
// runtime offers) and `reportError` (HTML), for extensions.
(function (internal) {
  "use strict";

  const origin = internal.timeOrigin();

  class Performance {
    get timeOrigin() { return origin; }
    now() { return internal.now(); }
    toJSON() { return { timeOrigin: origin }; }
  }
  Object.defineProperty(Performance.prototype, Symbol.toStringTag, { value: "Performance", configurable: true });

  class Navigator {
    get userAgent() { return internal.userAgent; }
    get language() { return "en-US"; }
    get languages() { return ["en-US"]; }
    get hardwareConcurrency() { return internal.hardwareConcurrency; }
    get platform() { return internal.platform; }
  }
  Object.defineProperty(Navigator.prototype, Symbol.toStringTag, { value: "Navigator", configurable: true });

  function reportError(error) {
    if (arguments.length < 1) throw new TypeError('The "error" argument must be specified');
    internal.reportError(error);
  }

  return { performance: new Performance(), navigator: new Navigator(), reportError };
})
