export { MEMORY_STORE_PAGE_BYTES, MemoryStore } from "./memory-store.js";
