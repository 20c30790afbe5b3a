build-san/host/tests/harness/query.o: tests/harness/query.c \
 tests/harness/query.h tests/harness/../../src/analyzer/capture.h \
 tests/harness/../../src/analyzer/../format/format.h
tests/harness/query.h:
tests/harness/../../src/analyzer/capture.h:
tests/harness/../../src/analyzer/../format/format.h:
