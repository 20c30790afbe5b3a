build-san/pic/src/recorder/interpose.o: src/recorder/interpose.c \
 src/recorder/interpose_inline.h src/recorder/recorder.h \
 src/recorder/live.h src/recorder/thread.h src/recorder/modules.h \
 src/recorder/../format/encode.h
src/recorder/interpose_inline.h:
src/recorder/recorder.h:
src/recorder/live.h:
src/recorder/thread.h:
src/recorder/modules.h:
src/recorder/../format/encode.h:
