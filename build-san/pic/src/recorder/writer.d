build-san/pic/src/recorder/writer.o: src/recorder/writer.c \
 src/recorder/writer.h src/recorder/config.h src/recorder/../common/fmt.h \
 src/recorder/../format/encode.h src/recorder/../format/format.h \
 src/recorder/aggregate.h src/recorder/log.h src/recorder/modules.h \
 src/recorder/os.h src/recorder/spin.h src/recorder/stacks.h
src/recorder/writer.h:
src/recorder/config.h:
src/recorder/../common/fmt.h:
src/recorder/../format/encode.h:
src/recorder/../format/format.h:
src/recorder/aggregate.h:
src/recorder/log.h:
src/recorder/modules.h:
src/recorder/os.h:
src/recorder/spin.h:
src/recorder/stacks.h:
