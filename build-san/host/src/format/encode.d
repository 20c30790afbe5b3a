build-san/host/src/format/encode.o: src/format/encode.c \
 src/format/encode.h src/format/../common/varint.h src/format/format.h
src/format/encode.h:
src/format/../common/varint.h:
src/format/format.h:
