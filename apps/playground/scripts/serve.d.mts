/** The playground's dist/ folder. */
export declare const DIST_DIR: string;
/** Serves `dir` (default dist/) on `host:port` (0: a free port). */
export declare function serveStatic(options?: {
  dir?: string;
  host?: string;
  port?: number;
}): Promise<{ url: string; close(): Promise<void> }>;
