build-san/pic/src/recorder/trigger.o: src/recorder/trigger.c \
 src/recorder/trigger.h src/recorder/config.h \
 src/recorder/../format/format.h src/recorder/aggregate.h \
 src/recorder/log.h src/recorder/os.h src/recorder/recorder.h \
 src/recorder/live.h src/recorder/thread.h src/recorder/writer.h
src/recorder/trigger.h:
src/recorder/config.h:
src/recorder/../format/format.h:
src/recorder/aggregate.h:
src/recorder/log.h:
src/recorder/os.h:
src/recorder/recorder.h:
src/recorder/live.h:
src/recorder/thread.h:
src/recorder/writer.h:
