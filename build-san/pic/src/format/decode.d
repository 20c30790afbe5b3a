build-san/pic/src/format/decode.o: src/format/decode.c \
 src/format/decode.h src/format/../common/varint.h src/format/format.h
src/format/decode.h:
src/format/../common/varint.h:
src/format/format.h:
