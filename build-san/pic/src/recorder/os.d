build-san/pic/src/recorder/os.o: src/recorder/os.c src/recorder/os.h
src/recorder/os.h:
