build-san/pic/src/recorder/stacks.o: src/recorder/stacks.c \
 src/recorder/stacks.h src/recorder/intern.h src/recorder/spin.h
src/recorder/stacks.h:
src/recorder/intern.h:
src/recorder/spin.h:
