build-san/tests/fault/test_corrupt: tests/fault/test_corrupt.c \
 tests/fault/../../src/analyzer/capture.h \
 tests/fault/../../src/analyzer/../format/format.h \
 tests/fault/../../src/format/encode.h \
 tests/fault/../../src/format/format.h tests/fault/../harness/harness.h
tests/fault/../../src/analyzer/capture.h:
tests/fault/../../src/analyzer/../format/format.h:
tests/fault/../../src/format/encode.h:
tests/fault/../../src/format/format.h:
tests/fault/../harness/harness.h:
