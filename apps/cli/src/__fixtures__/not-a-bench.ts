/** A module that exports things, but no bench as its default export. */
export const rows = 64;
export default { name: "half a bench" };
