/**
 * The layout of a pseudo-channel's controller state (`PortState`): offsets of every field in its
 * typed arrays. `st` holds banks (stride BANK_STRIDE), then bank groups (per SID x bank group),
 * then SIDs, then the port's scalars; `ed` entries (stride E_STRIDE); `rd` requests (R_STRIDE).
 */

/** Bank fields (stride {@link BANK_STRIDE}). */
export const B_ROW = 0; // open row, -1 closed
export const B_ACT = 1; // earliest ACT (tRC, tRP, refresh)
export const B_RD = 2; // earliest RD (ACT + tRCD_RD)
export const B_WR = 3; // earliest WR (ACT + tRCD_WR)
export const B_PRE = 4; // earliest PRE (tRAS, tRTP, write recovery)
export const B_ACTIVE = 5; // entries that activated this bank and still have bursts
export const B_HITS = 6; // row-hit cap: bursts of younger hits that went ahead of an older request since the ACT
export const BANK_STRIDE = 7;

/** Bank-group fields (per SID x bank group). */
export const G_RD = 0; // tCCD_L after RD, tWTR_L after write data
export const G_WR = 1; // tCCD_L after WR
export const G_ACT = 2; // tRRD_L
export const BG_STRIDE = 3;

/** SID fields. */
export const S_RD = 0; // tCCD_S (same SID) / tCCD_R (other SID) after RD
export const S_WR = 1; // tCCD_S after WR
export const SID_STRIDE = 2;

/** Port fields (offsets from `portBase`). */
export const P_RD = 0; // tBL after RD, tWTR_S after write data
export const P_WR = 1; // tBL after WR, tRTW after RD
export const P_ACT = 2; // tRRD_S, tRREFD
export const P_ROWBUS = 3; // row command bus free
export const P_COLBUS = 4; // column command bus free
export const P_FAW = 5; // 4 slots: the last four ACT times
export const P_FAWI = 9; // next FAW slot
export const P_PREAB = 10; // earliest PREab
export const P_REFAB = 11; // earliest REFab
export const P_REF_NEXT = 12; // when the next refresh is due
export const P_REF_PENDING = 13; // a refresh is due and not yet issued
export const P_REF_BANK = 14; // per-bank refresh: the next bank
export const P_REFPB = 15; // earliest REFpb (tRREFD)
export const P_MODE = 16; // 0 read, 1 write drain
export const P_RQ = 17; // read queue occupancy, bursts
export const P_WQ = 18; // write queue occupancy, bursts
export const P_HEAD = 19; // priority list head entry, -1
export const P_TAIL = 20; // priority list tail entry, -1
export const P_OVR = 21; // read overflow head index
export const P_OVW = 22; // write overflow head index
export const P_OPEN = 23; // open banks
export const P_ACTIVE = 24; // active entries
export const P_RD_HIT = 25;
export const P_RD_MISS = 26;
export const P_RD_CONF = 27;
export const P_WR_HIT = 28;
export const P_WR_MISS = 29;
export const P_WR_CONF = 30;
export const P_REFS = 31;
export const P_ACTS = 32;
export const P_RD_BURSTS = 33;
export const P_WR_BURSTS = 34;
export const P_RHEAD = 35; // class-1 read list head, tail at +1
export const P_WHEAD = 37; // class-1 write list head, tail at +1
export const P_CLOCK = 39; // the last command's time (only for an in-order scheduler)
export const P_CMDMIN = 40; // no row command before this (its channel's row command slot was taken)
export const P_FLIP = 41; // the write-drain mode flipped since the last command (1), or not (0)
export const P_DRAIN_SINCE = 42; // the first command of the current write drain
export const P_DRAIN_NS = 43; // ns of finished write drains (first command in write mode to first in read mode)
export const P_LAST_CMD = 44; // the last command's time
export const P_CMDMIN_COL = 45; // no column command before this (its channel's column slot was taken)
export const P_OCC_T = 46; // when the queue occupancies last changed (the integrals below reach it)
export const P_RQ_AREA = 47; // time integral of the read queue occupancy, burst x ns
export const P_WQ_AREA = 48; // time integral of the write queue occupancy, burst x ns
export const P_RQ_MAX = 49; // most bursts in the read queue at once
export const P_WQ_MAX = 50; // most bursts in the write queue at once
export const P_ACT_SINCE = 51; // the start of the current active span (a bank open or refreshing)
export const P_ACT_END = 52; // the end of the last active span
export const P_ACTIVE_NS = 53; // ns of finished active spans (DRAMPower's rank active time)
export const P_REF_LAST = 54; // the last REFab's time (refresh_scope channel: the next PC's refresh waits for it)
export const PORT_FIELDS = 55;

/** The three queue lists: priority class (any kind), class-1 reads, class-1 writes. */
export const LIST_PRIO = 0;
export const LIST_READS = 1;
export const LIST_WRITES = 2;

/** Entry progress fields (stride {@link E_STRIDE}). */
export const E_ISSUED = 0; // bursts issued
export const E_STATE = 1; // -1 waiting for room, 0 queued, 1 activated by itself, 2 done
export const E_NEXT = 2; // queue list
export const E_PREV = 3;
export const E_CLASS = 4; // 0 unclassified, 1 row hit, 2 miss (closed bank), 3 conflict
export const E_PRIO = 5; // 1: activated its bank, or its request started (priority class)
export const E_LIST = 6; // the queue list it is on, -1 none
export const E_STRIDE = 7;

/** Request progress fields. */
export const R_LEFT = 0; // bursts not yet issued
export const R_FIRST = 1; // first column command, -1 before
export const R_LAST = 2; // last column command so far
export const R_STRIDE = 3;

export const READ = 0;
export const WRITE = 1;

/** Tolerance of time comparisons, ns. */
export const EPS = 1e-6;
