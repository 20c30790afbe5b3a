build-san/tests/unit/test_format: tests/unit/test_format.c \
 tests/unit/../../src/common/fmt.h tests/unit/../../src/format/decode.h \
 tests/unit/../../src/format/encode.h \
 tests/unit/../../src/format/format.h tests/unit/../harness/harness.h
tests/unit/../../src/common/fmt.h:
tests/unit/../../src/format/decode.h:
tests/unit/../../src/format/encode.h:
tests/unit/../../src/format/format.h:
tests/unit/../harness/harness.h:
