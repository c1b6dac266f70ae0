'use strict';
// require('clipfold'): the package is ES modules; Node.js ≥ 20.19 and
// ≥ 22.12 load them with require() (no warning, no second copy of the
// classes: `instanceof` holds between import and require users). On older
// Node.js versions this says so instead of failing with ERR_REQUIRE_ESM.
try {
  module.exports = require('./src/index.js');
} catch (err) {
  if (err && (err.code === 'ERR_REQUIRE_ESM' || err.code === 'ERR_REQUIRE_ASYNC_MODULE')) {
    throw new Error(`clipfold: require('clipfold') needs Node.js >= 20.19 or >= 22.12 (require of ES modules); this is ${process.version}. `
      + "Use `const clipfold = await import('clipfold')`, or upgrade Node.js.", { cause: err });
  }
  throw err;
}
