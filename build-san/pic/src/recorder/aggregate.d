build-san/pic/src/recorder/aggregate.o: src/recorder/aggregate.c \
 src/recorder/aggregate.h src/recorder/../format/format.h \
 src/recorder/intern.h src/recorder/spin.h src/recorder/os.h
src/recorder/aggregate.h:
src/recorder/../format/format.h:
src/recorder/intern.h:
src/recorder/spin.h:
src/recorder/os.h:
