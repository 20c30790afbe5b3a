build-san/tests/unit/test_varint: tests/unit/test_varint.c \
 tests/unit/../../src/common/varint.h tests/unit/../harness/harness.h
tests/unit/../../src/common/varint.h:
tests/unit/../harness/harness.h:
