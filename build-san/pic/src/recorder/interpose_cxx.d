build-san/pic/src/recorder/interpose_cxx.o: src/recorder/interpose_cxx.c \
 src/recorder/interpose_inline.h src/recorder/recorder.h \
 src/recorder/live.h src/recorder/thread.h
src/recorder/interpose_inline.h:
src/recorder/recorder.h:
src/recorder/live.h:
src/recorder/thread.h:
