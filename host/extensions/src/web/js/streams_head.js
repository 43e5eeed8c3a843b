// The WHATWG Streams standard: the classes come from web-streams-polyfill (the standard's
// reference implementation, MIT, vendored in ../vendor with its licence), evaluated inside this
// function so that nothing but the exported classes reaches an extension; TextEncoderStream,
// TextDecoderStream (Encoding standard) and CompressionStream/DecompressionStream (Compression
// standard, natively through flate2) are built on its TransformStream.
(function (internal) {
  const exports = {};
  const module = {};
