build-san/pic/src/recorder/live.o: src/recorder/live.c \
 src/recorder/live.h src/recorder/../common/hash.h src/recorder/os.h \
 src/recorder/spin.h
src/recorder/live.h:
src/recorder/../common/hash.h:
src/recorder/os.h:
src/recorder/spin.h:
