build-san/host/src/analyzer/capture.o: src/analyzer/capture.c \
 src/analyzer/capture.h src/analyzer/../format/format.h \
 src/analyzer/../format/decode.h
src/analyzer/capture.h:
src/analyzer/../format/format.h:
src/analyzer/../format/decode.h:
