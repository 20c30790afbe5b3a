build-san/pic/src/recorder/modules.o: src/recorder/modules.c \
 src/recorder/modules.h src/recorder/../format/encode.h \
 src/recorder/../format/format.h src/recorder/os.h src/recorder/spin.h
src/recorder/modules.h:
src/recorder/../format/encode.h:
src/recorder/../format/format.h:
src/recorder/os.h:
src/recorder/spin.h:
