build-san/pic/src/recorder/unwind.o: src/recorder/unwind.c \
 src/recorder/unwind.h src/recorder/thread.h \
 src/recorder/../format/format.h src/recorder/config.h src/recorder/os.h
src/recorder/unwind.h:
src/recorder/thread.h:
src/recorder/../format/format.h:
src/recorder/config.h:
src/recorder/os.h:
