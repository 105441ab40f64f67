// The edge-runtime side of the runtime test: the demo scenario, exposed for a script context that
// has only web-standard APIs (no `process`, no `require`, no file system).
export { runScenario } from './demo-app.js';
