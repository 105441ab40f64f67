// GENERATED FILE, DO NOT EDIT. Compiled from ../ascii-tokens.wat by packages/core/scripts/build-kernels.mjs;
// edit the .wat file and regenerate with `node packages/core/scripts/build-kernels.mjs`.

/** The WebAssembly module compiled from ascii-tokens.wat, base64-encoded (460 bytes). */
export const asciiTokensWasm =
  'AGFzbQEAAAABDAFgB39/f39/f38BfwIPAQNlbnYGbWVtb3J5AgABAwIBAAcOAQpzY2FuX2FzY2lpAAAKjgMBiwMDBH8BewJ/IAIh' +
  'ByADIARBFGxqIQwCQANAAkADQCAHIAFPDQMgACAHav0ABAAhCyALQSD9D/1QQeEA/Q/9cUEa/Q/9JiALQTD9D/1xQQr9D/0m/VD9' +
  'ZCEKIAoNASAHQRBqIQcMAAsLIAcgCmhqIQggCCABTw0BIAghBwJAA0AgACAHav0ABAAhC0H//wMgC0Eg/Q/9UEHhAP0P/XFBGv0P' +
  '/SYgC0Ew/Q/9cUEK/Q/9Jv1Q/WRzIQogCg0BIAdBEGohBwwACwsgByAKaGohCSAFIAAgCWotAABqLQAAQQJGBEAgBSAAIAlqLQAB' +
  'ai0AAEEBRgRAIAYgCDYCACAEDwsLIAkgCGshDSAMIAg2AgAgDCAJQQJ0QQJBACANQQxLG3I2AgQgDCAAIAlqQRBr/QAEAP0MDw4N' +
  'DAsKCQgHBgUEAwIBAP0OIA1BECANQRBJG/0P/QwAAQIDBAUGBwgJCgsMDQ4P/Sj9Tv0LBAggDEEUaiEMIARBAWohBCAJIQcMAAsL' +
  'IAZBfzYCACAECw==';
