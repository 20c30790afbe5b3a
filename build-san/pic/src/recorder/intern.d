build-san/pic/src/recorder/intern.o: src/recorder/intern.c \
 src/recorder/intern.h src/recorder/spin.h src/recorder/../common/hash.h \
 src/recorder/os.h
src/recorder/intern.h:
src/recorder/spin.h:
src/recorder/../common/hash.h:
src/recorder/os.h:
