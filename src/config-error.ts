// A start-up refusal: configuration the daemon cannot run with (a bad flag, an unusable data dir or
// agent user). The daemon prints its message as one line and exits 2 (src/startup-failure.ts).
// It is its own module, below config.ts, so that the code that finds such a problem (src/process/,
// src/store/) can throw it without importing the configuration it is checking.
export class ConfigError extends Error {}
