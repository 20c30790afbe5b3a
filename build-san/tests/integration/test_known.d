build-san/tests/integration/test_known: tests/integration/test_known.c \
 tests/integration/../harness/harness.h \
 tests/integration/../harness/query.h \
 tests/integration/../harness/../../src/analyzer/capture.h \
 tests/integration/../harness/../../src/analyzer/../format/format.h \
 tests/integration/../programs/known.h
tests/integration/../harness/harness.h:
tests/integration/../harness/query.h:
tests/integration/../harness/../../src/analyzer/capture.h:
tests/integration/../harness/../../src/analyzer/../format/format.h:
tests/integration/../programs/known.h:
