build-san/host/src/cli/inspect.o: src/cli/inspect.c \
 src/cli/../analyzer/capture.h src/cli/../analyzer/../format/format.h \
 src/cli/cli.h
src/cli/../analyzer/capture.h:
src/cli/../analyzer/../format/format.h:
src/cli/cli.h:
