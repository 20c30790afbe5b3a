build-san/pic/src/recorder/api.o: src/recorder/api.c \
 src/recorder/../../include/heapprof.h src/recorder/../format/format.h \
 src/recorder/recorder.h src/recorder/live.h src/recorder/thread.h \
 src/recorder/writer.h src/recorder/config.h
src/recorder/../../include/heapprof.h:
src/recorder/../format/format.h:
src/recorder/recorder.h:
src/recorder/live.h:
src/recorder/thread.h:
src/recorder/writer.h:
src/recorder/config.h:
