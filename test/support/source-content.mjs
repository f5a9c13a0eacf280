// Loaded by the test runner after tsx (`.taprc`, node-arg). tsx leaves the
// original text out of its source maps unless NODE_V8_COVERAGE is set, and
// says so with `sourcesContent: [null]`; the test runner collects coverage
// through the inspector instead, so its report read that null as an empty
// file and counted every TypeScript file as one covered line. Dropping the
// empty entry makes the report read each file from disk, as it does for a
// map without one.
import { register } from 'node:module';

register('./source-content-hooks.mjs', import.meta.url);
