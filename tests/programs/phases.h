/*
 * phases.h - the known phases of tests/programs/phases.c, shared with the
 * test that checks them (tests/integration/test_moments.c).
 *
 *   A: build_a allocates PHASE_A_N blocks of PHASE_A_SIZE; snapshot 1;
 *      a pause of PHASE_PAUSE_MS (busy with temporary allocations, so the
 *      recorder keeps sampling: it samples on allocation ticks);
 *   B: build_b frees A's blocks one by one, each replaced by one of
 *      PHASE_B_SIZE; snapshot 2; a pause;
 *   C: B freed, leak_c leaks PHASE_C_N blocks of PHASE_C_SIZE; exit
 *      (snapshot 3).
 */
#ifndef HP_TEST_PHASES_H
#define HP_TEST_PHASES_H

#define PHASE_A_N 100
#define PHASE_A_SIZE 10000
#define PHASE_B_N PHASE_A_N
#define PHASE_B_SIZE 30000
#define PHASE_C_N 10
#define PHASE_C_SIZE 5000
#define PHASE_PAUSE_MS 300
#define PHASE_TEMP_SIZE 48 /* the pause's temporary blocks */

#endif
