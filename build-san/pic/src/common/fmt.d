build-san/pic/src/common/fmt.o: src/common/fmt.c src/common/fmt.h
src/common/fmt.h:
