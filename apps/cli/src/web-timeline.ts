// The trace -> timeline reader lives in the page's package (browser-safe, the playground uses it
// too); kb web's file reader (web-input.ts) and tests import it from here.
export {
  binCounter,
  COUNTER_BINS,
  isRecord,
  MAX_TIMELINE_COUNTER_POINTS,
  TimelineBuilder,
  type TraceTimeline,
  timelineOfTrace,
  WHAT_KB_WEB_READS,
} from "@kb/web-ui/trace-timeline";
