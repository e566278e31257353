// The one test for "a JSON object": what parsed native input is checked with before its fields
// are read. Arrays and null are not objects here.
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
