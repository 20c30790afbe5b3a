/*
 * analyzerstacks.c - the analyzer benchmark's million stacks
 * (bench/analyzer/manystacks.c: 4^LEVELS distinct stacks, LEVELS from
 * argv[1], a block on each), built as a test program: test_known measures
 * the analyzer's peak memory on its capture against issue 25's goal.
 */
#include "../../bench/analyzer/manystacks.c"
