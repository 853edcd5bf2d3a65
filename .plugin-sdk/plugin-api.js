// Generated from core/plugin-api.ts by `npm run build:plugin-sdk`; do not edit.
/** The loader refuses plugins built against another version of this contract. */
export const API_VERSION = 1;
export function drop(reason, details) {
    return Object.freeze({ dropped: true, reason, details });
}
export function isDropped(value) {
    return typeof value === 'object' && value !== null && value.dropped === true;
}
/** Identity function that gives plugin authors type inference for their options. */
export function definePlugin(definition) {
    return definition;
}
