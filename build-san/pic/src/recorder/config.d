build-san/pic/src/recorder/config.o: src/recorder/config.c \
 src/recorder/config.h src/recorder/../format/format.h src/recorder/log.h \
 src/recorder/os.h
src/recorder/config.h:
src/recorder/../format/format.h:
src/recorder/log.h:
src/recorder/os.h:
