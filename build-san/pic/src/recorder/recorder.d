build-san/pic/src/recorder/recorder.o: src/recorder/recorder.c \
 src/recorder/recorder.h src/recorder/live.h src/recorder/thread.h \
 src/recorder/../common/hash.h src/recorder/../format/format.h \
 src/recorder/aggregate.h src/recorder/config.h src/recorder/log.h \
 src/recorder/modules.h src/recorder/../format/encode.h src/recorder/os.h \
 src/recorder/sampler.h src/recorder/stacks.h src/recorder/trigger.h \
 src/recorder/unwind.h src/recorder/writer.h
src/recorder/recorder.h:
src/recorder/live.h:
src/recorder/thread.h:
src/recorder/../common/hash.h:
src/recorder/../format/format.h:
src/recorder/aggregate.h:
src/recorder/config.h:
src/recorder/log.h:
src/recorder/modules.h:
src/recorder/../format/encode.h:
src/recorder/os.h:
src/recorder/sampler.h:
src/recorder/stacks.h:
src/recorder/trigger.h:
src/recorder/unwind.h:
src/recorder/writer.h:
