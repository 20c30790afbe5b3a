build-san/pic/src/recorder/log.o: src/recorder/log.c src/recorder/log.h \
 src/recorder/../common/fmt.h src/recorder/os.h
src/recorder/log.h:
src/recorder/../common/fmt.h:
src/recorder/os.h:
